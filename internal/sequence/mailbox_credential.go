package sequence

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/secrets"
)

// DeliveryMailboxAuthRevoked: an oauth2 mailbox's grant was refused by its
// provider (invalid_grant). The mailbox pauses with one
// mailbox_auth_revoked event per episode and waits for `rindactl mailbox
// authorize`; no lead is charged an attempt.
const DeliveryMailboxAuthRevoked DeliveryKind = "mailbox_auth_revoked"

// OAuthTokens hands out a mailbox's fresh OAuth2 access token
// (*mailauth.Tokens).
type OAuthTokens interface {
	AccessToken(ctx context.Context, mailboxID int64, address string, s mailauth.Settings) (string, error)
	// Refused: a server refused this access token; the next AccessToken
	// refreshes it.
	Refused(ctx context.Context, mailboxID int64, token string) error
}

// Credential is what mb signs in to SMTP and IMAP with: the password from
// its password_env, or for an oauth2 mailbox a fresh access token (sent
// with SASL XOAUTH2). Every failure is a *DeliveryError: a revoked grant
// is DeliveryMailboxAuthRevoked, a missing variable, key or grant
// DeliveryMailboxAuthFailed, a provider out of reach DeliveryTransient.
// No error holds the secret.
func Credential(ctx context.Context, mb Mailbox, lookup func(string) (string, bool), tokens OAuthTokens) (string, error) {
	if mb.OAuth2 == nil {
		password, ok := lookup(mb.PasswordEnv)
		if !ok {
			return "", &DeliveryError{Kind: DeliveryMailboxAuthFailed, Err: &MissingCredentialError{Address: mb.Address, Env: mb.PasswordEnv}}
		}
		return password, nil
	}
	if tokens == nil {
		return "", &DeliveryError{Kind: DeliveryMailboxAuthFailed, Err: fmt.Errorf("mailbox %s uses oauth2 but this command has no token store", mb.Address)}
	}
	tok, err := tokens.AccessToken(ctx, mb.ID, mb.Address, *mb.OAuth2)
	if err == nil {
		return tok, nil
	}
	var revoked *mailauth.RevokedError
	var never *mailauth.NotAuthorizedError
	var cfg *mailauth.ConfigError
	var keyErr *secrets.ConfigError
	switch {
	case errors.As(err, &revoked):
		return "", &DeliveryError{Kind: DeliveryMailboxAuthRevoked, Phase: PhaseConnect, RevokedSince: revoked.Since, Err: err}
	case errors.As(err, &never), errors.As(err, &cfg), errors.As(err, &keyErr):
		return "", &DeliveryError{Kind: DeliveryMailboxAuthFailed, Phase: PhaseConnect, Err: err}
	}
	return "", &DeliveryError{Kind: DeliveryTransient, Phase: PhaseConnect, Err: err}
}

// pauseEvent is the kind and dedupe key of a pause's event: one
// mailbox_paused per pause, but one mailbox_auth_revoked per episode of a
// revoked grant, however many hourly pauses it lasts.
func pauseEvent(de *DeliveryError, mailboxID int64, episode string) (kind, key string) {
	if de.Kind == DeliveryMailboxAuthRevoked && !de.RevokedSince.IsZero() {
		kind, episode = string(DeliveryMailboxAuthRevoked), strconv.FormatInt(de.RevokedSince.UnixMicro(), 10)
		return kind, kind + ":" + strconv.FormatInt(mailboxID, 10) + ":" + episode
	}
	return "mailbox_paused", "mailbox_paused:" + strconv.FormatInt(mailboxID, 10) + ":" + episode
}
