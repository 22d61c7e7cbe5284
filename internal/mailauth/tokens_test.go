package mailauth_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/mailauth/oauthtest"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func newKey(t *testing.T) secrets.MasterKey {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	k, err := secrets.ParseMasterKey("test", base64.StdEncoding.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// oauthMailboxes makes n mailboxes in a workspace, each with a grant at
// the stand-in sealed under key; it returns their ids and addresses.
func oauthMailboxes(t *testing.T, db *storetest.DB, s *oauthtest.Server, key secrets.MasterKey, n int) ([]int64, []string) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO workspaces (name) VALUES ('acme')`); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var addrs []string
	for i := range n {
		addr := fmt.Sprintf("sdr%02d@acme.test", i)
		var id int64
		if err := db.Pool.QueryRow(ctx, `INSERT INTO mailboxes (workspace_id, address, smtp_url) VALUES (1, $1, 'smtp://127.0.0.1:1') RETURNING id`, addr).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if err := secrets.StoreMailboxGrant(ctx, db.Pool, key, id, addr, s.Grant(addr, "mail"), "", time.Time{}, "test"); err != nil {
			t.Fatal(err)
		}
		ids, addrs = append(ids, id), append(addrs, addr)
	}
	return ids, addrs
}

func settings(s *oauthtest.Server) mailauth.Settings {
	return mailauth.Settings{Provider: mailauth.ProviderGeneric, ClientIDEnv: "CLIENT_ID", AuthURL: s.AuthURL(), TokenURL: s.TokenURL(), Scopes: []string{"mail"}}
}

func lookup(s *oauthtest.Server) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "CLIENT_ID" {
			return s.ClientID, true
		}
		return "", false
	}
}

// 16 concurrent ticks, each with its own pool (as separate processes and
// hosts have), over 20 OAuth mailboxes whose tokens expire between rounds:
// exactly one token request per mailbox per expiry reaches the provider,
// and a grant revoked mid-run stops only its own mailbox, reported as the
// episode's first exactly once.
func TestOneRefreshPerMailboxPerExpiry(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	s := oauthtest.New(t)
	s.RotateRefresh = true
	key := newKey(t)
	ids, addrs := oauthMailboxes(t, db, s, key, 20)

	// The clock the cached expiry is read by: each round is two hours
	// after the last, past the stand-in's one-hour tokens.
	var round atomic.Int64
	base := time.Now()
	now := func() time.Time { return base.Add(time.Duration(round.Load()) * 2 * time.Hour) }
	const ticks, rounds = 16, 3
	sources := make([]*mailauth.Tokens, ticks)
	for i := range sources {
		pool, err := store.Open(context.Background(), store.Config{URL: db.TickURL(), MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		sources[i] = mailauth.NewTokens(pool, key, mailauth.Options{LookupEnv: lookup(s), Now: now})
	}
	revoked := addrs[7]
	var firsts atomic.Int64
	for r := range rounds {
		round.Store(int64(r))
		if r == rounds-1 {
			s.Revoke(revoked)
		}
		var wg sync.WaitGroup
		errs := make(chan error, ticks*len(ids))
		for i, src := range sources {
			wg.Go(func() {
				for j := range ids {
					k := (i + j) % len(ids) // each tick starts at another mailbox
					tok, err := src.AccessToken(context.Background(), ids[k], addrs[k], settings(s))
					var re *mailauth.RevokedError
					switch {
					case addrs[k] == revoked && r == rounds-1:
						if !errors.As(err, &re) {
							errs <- fmt.Errorf("revoked %s: %v, want a RevokedError", addrs[k], err)
						} else if re.First {
							firsts.Add(1)
						}
					case err != nil:
						errs <- fmt.Errorf("round %d, %s: %v", r, addrs[k], err)
					case !s.Valid(addrs[k], tok):
						errs <- fmt.Errorf("round %d, %s: the token handed out is not valid at the provider", r, addrs[k])
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for _, a := range addrs {
			if got := s.TokenRequests(a); got != r+1 {
				t.Fatalf("round %d: %s made %d token requests in all, want %d (one per expiry)", r, a, got, r+1)
			}
		}
	}
	if firsts.Load() != 1 {
		t.Fatalf("%d reports opened the revoked episode, want exactly 1", firsts.Load())
	}
	// The revoked mailbox asks the provider no more: later ticks read the
	// episode from the row.
	if _, err := sources[0].AccessToken(context.Background(), ids[7], revoked, settings(s)); err == nil || s.TokenRequests(revoked) != rounds {
		t.Fatalf("after the episode: %v, %d requests, want an error and still %d", err, s.TokenRequests(revoked), rounds)
	}
}

// Tokens are sealed at rest, open only with their master key, move with
// `secrets rotate`, and no error carries one.
func TestMailboxTokensSealedAndRotated(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	s := oauthtest.New(t)
	ctx := context.Background()
	old, next := newKey(t), newKey(t)
	ids, addrs := oauthMailboxes(t, db, s, old, 2)
	tokens := mailauth.NewTokens(db.Pool, old, mailauth.Options{LookupEnv: lookup(s)})
	access, err := tokens.AccessToken(ctx, ids[0], addrs[0], settings(s))
	if err != nil {
		t.Fatal(err)
	}
	requireNoPlaintext(t, db.Pool, access)

	n, err := secrets.Rotate(ctx, db.Pool, old, next, "test")
	if err != nil || n != 2 {
		t.Fatalf("rotate: %d %v, want the 2 mailboxes' tokens resealed", n, err)
	}
	_, err = mailauth.NewTokens(db.Pool, old, mailauth.Options{LookupEnv: lookup(s)}).AccessToken(ctx, ids[1], addrs[1], settings(s))
	var ce *secrets.ConfigError
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "rt-") || strings.Contains(err.Error(), "at-") {
		t.Fatalf("the old master key after rotation: %v, want a ConfigError without a token", err)
	}
	rotated := mailauth.NewTokens(db.Pool, next, mailauth.Options{LookupEnv: lookup(s)})
	if again, err := rotated.AccessToken(ctx, ids[0], addrs[0], settings(s)); err != nil || again != access {
		t.Fatalf("the cached token after rotation: %v (same token: %v)", err, again == access)
	}
	if tok, err := rotated.AccessToken(ctx, ids[1], addrs[1], settings(s)); err != nil || !s.Valid(addrs[1], tok) {
		t.Fatalf("a refresh after rotation: %v", err)
	}
	if _, err := rotated.AccessToken(ctx, 9999, "nobody@acme.test", settings(s)); !errors.As(err, new(*mailauth.NotAuthorizedError)) ||
		!strings.Contains(err.Error(), "rindactl mailbox authorize nobody@acme.test") {
		t.Fatalf("a mailbox never authorized: %v", err)
	}
}

// requireNoPlaintext checks that no stored byte string holds token.
func requireNoPlaintext(t *testing.T, pool *pgxpool.Pool, token string) {
	t.Helper()
	var hits int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM mailbox_oauth_tokens
		WHERE position(convert_to($1, 'UTF8') IN refresh_sealed) > 0 OR position(convert_to($1, 'UTF8') IN coalesce(access_sealed, ''::bytea)) > 0`, token).Scan(&hits); err != nil {
		t.Fatal(err)
	}
	if hits != 0 {
		t.Fatal("a token is stored in plaintext")
	}
}
