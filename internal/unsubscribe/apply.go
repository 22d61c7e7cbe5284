package unsubscribe

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rindactl/rindactl/internal/store"
)

// Via says who used a token, as unsubscribes.via records it.
type Via string

const (
	ViaHTTP   Via = "http"   // the one-click POST or the confirmation page
	ViaMailto Via = "mailto" // the List-Unsubscribe mail, read by inbox tick
	ViaApply  Via = "apply"  // an operator: rindactl unsubscribe apply
)

// ErrReplayed is a token used once already: its second use changes nothing.
var ErrReplayed = errors.New("this unsubscribe token was used already")

// Check says whether token may still be used: nil, ErrBadToken or
// ErrReplayed (or a database error). It changes nothing, so a page can ask
// before its button posts.
func Check(ctx context.Context, db store.DBTX, token string) error {
	_, _, err := target(ctx, db, token)
	return err
}

// Apply uses token: the address it was sent to is suppressed in its
// workspace and every active enrollment of it ends as unsubscribed, at
// once. A bad token returns ErrBadToken and a used one ErrReplayed; neither
// changes anything.
func Apply(ctx context.Context, db store.TxDB, token string, via Via) (store.UnsubscribeResult, error) {
	id, t, err := target(ctx, db, token)
	if err != nil {
		return store.UnsubscribeResult{}, err
	}
	res, err := store.ApplyUnsubscribe(ctx, db, id, t, string(via))
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23503":
		// The enrollment was deleted (lead forget) since the lookup.
		return store.UnsubscribeResult{}, ErrBadToken
	case err != nil:
		return store.UnsubscribeResult{}, err
	case !res.Recorded:
		return res, ErrReplayed
	}
	return res, nil
}

// target finds and authenticates what token names.
func target(ctx context.Context, db store.DBTX, token string) (int64, store.UnsubscribeTarget, error) {
	id, err := Parse(token)
	if err != nil {
		return 0, store.UnsubscribeTarget{}, err
	}
	t, found, err := store.FindUnsubscribeTarget(ctx, db, id)
	switch {
	case err != nil:
		return 0, t, err
	case !found || !Verify(t.Key, token):
		return 0, t, ErrBadToken
	case t.Used:
		return 0, t, ErrReplayed
	}
	return id, t, nil
}
