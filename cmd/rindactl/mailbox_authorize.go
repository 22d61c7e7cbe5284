package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

// MailboxAuthorizeOptions holds the flags of `rindactl mailbox authorize`.
type MailboxAuthorizeOptions struct {
	f         *Factory
	Address   string
	Workspace string
	Timeout   time.Duration
	// Device runs the device authorization grant (RFC 8628) instead of
	// the loopback redirect.
	Device bool
	// browse, when set, is given the URL to open (tests play the browser);
	// with Device, the verification page and the user code.
	browse func(url string)
	enter  func(verificationURI, userCode string)
}

// newCmdMailboxAuthorize is `mailbox authorize`, a subcommand of the
// `mailbox` group.
func newCmdMailboxAuthorize(f *Factory) *cobra.Command {
	opts := &MailboxAuthorizeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "authorize ADDRESS",
		Short: "Connect an oauth2 mailbox (Google Workspace, Microsoft 365): consent in a browser",
		Long: `Run the OAuth2 consent for a mailbox whose campaign file gives it
auth: {method: oauth2, provider: google|microsoft|generic, ...}
(docs/campaign-format.md). The command listens on 127.0.0.1 on a free port,
prints the provider's URL and waits for the browser's redirect (RFC 8252,
with PKCE). Open the URL on this machine, signed in as the mailbox, and
consent. The refresh token is stored sealed with the master key
(RINDA_SECRET_KEY or RINDA_SECRET_KEY_FILE), like workspaces' provider keys,
and never printed or logged; 'secrets rotate' reseals it. From then on the
email and inbox ticks sign in with SASL XOAUTH2, refreshing the access
token once per expiry for every host.

Run it again when the mailbox is paused with mailbox_auth_revoked (the grant
was revoked, expired or the password changed). Written to the audit log.
On a machine without a browser, forward the port first
(ssh -L PORT:127.0.0.1:PORT host) with the PORT the command prints, or,
for microsoft (and generic with a device_auth_url), use --device: the
command prints a page and a code to type there on any device (RFC 8628)
and waits for the sign-in. Google does not allow --device for mail.`,
		Example: `  export RINDA_M365_CLIENT_ID=... RINDA_M365_CLIENT_SECRET=... RINDA_SECRET_KEY=...
  rindactl mailbox authorize sdr01@acme.com

  # on a server without a browser (Microsoft 365)
  rindactl mailbox authorize sdr01@acme.com --device`,
		Args: exactArgs(1, "the mailbox's address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Address = args[0]
			return mailboxAuthorizeRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Workspace, "workspace", "w", "", "the mailbox's workspace, when the address is in several")
	fl.DurationVar(&opts.Timeout, "timeout", mailauth.ConsentTimeoutDefault, "how long to wait for the browser's redirect (or, with --device, the sign-in)")
	fl.BoolVar(&opts.Device, "device", false, "sign in with a code on any device (RFC 8628) instead of a browser on this machine; microsoft, or generic with a device_auth_url")
	return cmd
}

func mailboxAuthorizeRun(ctx context.Context, opts *MailboxAuthorizeOptions) error {
	if opts.Timeout <= 0 {
		return usageError("--timeout must be positive, e.g. 5m")
	}
	mk, ok, err := secrets.LoadMasterKey(opts.f.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	if !ok {
		return usageError("%s is not set: the refresh token is stored sealed under it; set it (or %s) to 32 random bytes in base64, e.g. from 'openssl rand -base64 32', on every tick host too",
			secrets.KeyEnv, secrets.KeyFileEnv)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	mb, err := oauthMailbox(ctx, pool, opts.Address, opts.Workspace)
	if err != nil {
		return err
	}
	out := opts.f.IO.Out
	tok, err := consentRun(ctx, opts, mb)
	var cerr *mailauth.ConfigError
	switch {
	case errors.As(err, &cerr):
		return usageError("mailbox %s: %v", mb.Address, cerr)
	case err != nil:
		return fmt.Errorf("mailbox %s: %w", mb.Address, err)
	}
	err = secrets.StoreMailboxGrant(ctx, pool, mk, mb.ID, mb.Address, tok.RefreshToken, tok.AccessToken, tok.Expiry, actor(opts.f))
	var kerr *secrets.ConfigError
	if errors.As(err, &kerr) {
		return usageError("%v", kerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mailbox %s authorized with %s: refresh token stored sealed (master key id %s); its ticks sign in with XOAUTH2 from now on\n",
		mb.Address, mb.OAuth2.Provider, mk.ID())
	return nil
}

// consentRun runs the loopback consent, or with --device the device grant,
// printing what the person must do.
func consentRun(ctx context.Context, opts *MailboxAuthorizeOptions, mb sequence.Mailbox) (*oauth2.Token, error) {
	out := opts.f.IO.Out
	if opts.Device {
		return mailauth.DeviceConsent{Settings: *mb.OAuth2, LookupEnv: opts.f.LookupEnv, Timeout: opts.Timeout,
			Show: func(page, code string) {
				fmt.Fprintf(out, "On any device, open\n\n  %s\n\nsign in as %s and enter the code\n\n  %s\n\nWaiting up to %s for the sign-in ...\n", page, mb.Address, code, opts.Timeout)
				if opts.enter != nil {
					opts.enter(page, code)
				}
			}}.Run(ctx)
	}
	return mailauth.Consent{Settings: *mb.OAuth2, LookupEnv: opts.f.LookupEnv, LoginHint: mb.Address, Timeout: opts.Timeout,
		Show: func(authURL, redirect string) {
			fmt.Fprintf(out, "Open this URL in a browser on this machine, signed in as %s, and consent:\n\n  %s\n\nWaiting up to %s for the redirect to %s ...\n", mb.Address, authURL, opts.Timeout, redirect)
			if opts.browse != nil {
				opts.browse(authURL)
			}
		}}.Run(ctx)
}

// oauthMailbox finds the stored mailbox and checks it is an oauth2 one.
func oauthMailbox(ctx context.Context, db store.DBTX, address, workspace string) (sequence.Mailbox, error) {
	refs, err := store.MailboxesByAddress(ctx, db, address, workspace)
	if err != nil {
		return sequence.Mailbox{}, err
	}
	switch {
	case len(refs) == 0 && workspace != "":
		return sequence.Mailbox{}, usageError("no mailbox %s in workspace %s: import the campaign file that lists it first", address, workspace)
	case len(refs) == 0:
		return sequence.Mailbox{}, usageError("no mailbox %s: import the campaign file that lists it first", address)
	case len(refs) > 1:
		var names []string
		for _, r := range refs {
			names = append(names, r.Workspace)
		}
		return sequence.Mailbox{}, usageError("mailbox %s is in workspaces %s: pass --workspace", address, strings.Join(names, ", "))
	}
	recs, err := store.Mailboxes(ctx, db, []int64{refs[0].ID})
	if err != nil || len(recs) == 0 {
		return sequence.Mailbox{}, errors.Join(fmt.Errorf("mailbox %s is gone", address), err)
	}
	mb, err := sequence.MailboxFromRecord(recs[0])
	if err != nil {
		return sequence.Mailbox{}, usageError("%v", err)
	}
	if mb.OAuth2 == nil {
		return sequence.Mailbox{}, usageError("mailbox %s signs in with a password: give it auth: {method: oauth2, provider: ...} in its campaign file (docs/campaign-format.md) and import it again", mb.Address)
	}
	return mb, nil
}
