package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/inbox"
	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

// mailboxLoginTimeout bounds each protocol's login check.
const mailboxLoginTimeout = 30 * time.Second

// MailboxTestOptions holds the flags of `rindactl mailbox test`.
type MailboxTestOptions struct {
	f *Factory
	sequence.MailboxTarget
}

func newCmdMailboxTest(f *Factory) *cobra.Command {
	opts := &MailboxTestOptions{f: f}
	cmd := &cobra.Command{
		Use:   "test ADDRESS",
		Short: "Log in to a mailbox over SMTP and IMAP, send nothing, say what failed",
		Long: `Log in to ADDRESS the way the ticks do: SMTP (connect, TLS or STARTTLS,
EHLO, AUTH, QUIT, no MAIL FROM: nothing is sent) and, when it has an
imap_url, IMAP (connect, TLS, LOGIN or XOAUTH2, EXAMINE INBOX, LOGOUT:
nothing is read or marked). A password mailbox reads its password_env
from this environment; an oauth2 mailbox uses its stored grant (a cached
access token the server refuses is refreshed once and tried again, as the
ticks do).

Each failure names its stage: password (the variable is not set), oauth,
DNS, TCP, TLS (with the server certificate's subject and issuer, or the
tls_ca file that cannot be used), AUTH (with the server's words, password
redacted) or session. Exits 0 when every login succeeds, 1 when one fails,
2 on an unknown address.`,
		Example: `  rindactl mailbox test sdr01@acme.test
  rindactl mailbox test sdr01@acme.test --workspace acme`,
		Args: exactArgs(1, "a mailbox address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Address = args[0]
			return mailboxTestRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "the mailbox's workspace (needed when the address is in several)")
	return cmd
}

func mailboxTestRun(ctx context.Context, opts *MailboxTestOptions) error {
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	found, err := sequence.FindMailbox(ctx, pool, opts.Address, opts.Workspace)
	if err != nil {
		return mailboxError(err)
	}
	mbs, err := storedMailboxes(ctx, pool, []int64{found.ID})
	if err != nil {
		return err
	}
	failed := false
	for _, r := range loginMailbox(ctx, pool, opts.f.LookupEnv, mbs[0]) {
		if r.err == nil {
			fmt.Fprintf(opts.f.IO.Out, "%-4s ok      %s: logged in and out, nothing sent or read\n", r.protocol, r.server)
			continue
		}
		failed = true
		fmt.Fprintf(opts.f.IO.ErrOut, "%-4s failed  %s: %s: %v\n", r.protocol, r.server, r.err.Stage, r.err.Err)
	}
	if failed {
		return &silentError{code: exitError}
	}
	return nil
}

// loginResult is one protocol's login to a mailbox.
type loginResult struct {
	protocol, server string
	err              *sequence.LoginError
}

// loginMailbox logs in to mb over SMTP and, when it has one, IMAP, with
// lookup's environment (the env file's, for doctor) and the stored
// OAuth grants.
func loginMailbox(ctx context.Context, pool *pgxpool.Pool, lookup func(string) (string, bool), mb sequence.Mailbox) []loginResult {
	getenv := func(k string) string { v, _ := lookup(k); return v }
	tokens := mailauth.NewTokensFromEnv(pool, getenv, mailauth.Options{LookupEnv: lookup})
	mailer := sequence.NewMailer(sequence.MailerOptions{LookupEnv: lookup, HELO: getenv(sequence.HELOEnv), Tokens: tokens})
	sctx, cancel := context.WithTimeout(ctx, mailboxLoginTimeout)
	defer cancel()
	results := []loginResult{{protocol: "smtp", server: mb.SMTP.Addr(), err: loginError(mailer.Probe(sctx, mb))}}
	if mb.IMAP != nil {
		err := inbox.Probe(ctx, mb, inbox.ProbeOptions{LookupEnv: lookup, Tokens: tokens, Timeout: mailboxLoginTimeout})
		results = append(results, loginResult{protocol: "imap", server: mb.IMAP.Addr(), err: loginError(err)})
	}
	return results
}

func loginError(err error) *sequence.LoginError {
	if err == nil {
		return nil
	}
	var le *sequence.LoginError
	if errors.As(err, &le) {
		return le
	}
	return &sequence.LoginError{Stage: sequence.LoginStageSession, Err: err}
}

// storedMailboxes are the mailboxes with these ids as the ticks read them.
func storedMailboxes(ctx context.Context, db store.DBTX, ids []int64) ([]sequence.Mailbox, error) {
	recs, err := store.Mailboxes(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	if len(recs) != len(ids) {
		return nil, errors.New("a mailbox was removed while being checked")
	}
	out := make([]sequence.Mailbox, 0, len(recs))
	for _, rec := range recs {
		mb, err := sequence.MailboxFromRecord(rec)
		if err != nil {
			return nil, usageError("%v", err)
		}
		out = append(out, mb)
	}
	return out, nil
}
