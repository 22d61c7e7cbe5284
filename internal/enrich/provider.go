package enrich

import (
	"context"
	"time"
)

// Lead is what a provider needs to look for an address.
type Lead struct {
	ID          int64
	WorkspaceID int64
	FirstName   string
	LastName    string
	Company     string
	Domain      string
}

// Valid reports whether a provider could search for the lead at all; an
// invalid lead becomes not_found without any call.
func (l Lead) Valid() bool {
	return l.Domain != "" && (l.FirstName != "" || l.LastName != "")
}

// Finding is a finder's answer. Found false with a nil error is a clean miss.
type Finding struct {
	Email string
	Found bool
	// Score is the provider's confidence 0-100 when it gives one, else 0.
	Score int
}

// Finder looks up a lead's email address. Implementations return either a
// Finding or a *ProviderError, never a bare error.
type Finder interface {
	Name() string
	FindEmail(ctx context.Context, lead Lead) (Finding, error)
}

// Verdict is a verifier's opinion of an address.
type Verdict string

const (
	VerdictOK         Verdict = "ok"
	VerdictCatchAll   Verdict = "catch_all"
	VerdictUnknown    Verdict = "unknown"
	VerdictInvalid    Verdict = "invalid"
	VerdictDisposable Verdict = "disposable"
)

// Deliverable reports whether an address with this verdict may be used.
// catch_all is accepted: the domain takes any address, so a found address is
// as good as it gets.
func (v Verdict) Deliverable() bool { return v == VerdictOK || v == VerdictCatchAll }

// Verifier checks whether an address is deliverable. Implementations return
// either a Verdict or a *ProviderError.
type Verifier interface {
	Name() string
	Verify(ctx context.Context, email string) (Verdict, error)
}

// Configurable is implemented by providers that can tell without a call that
// they cannot work on this host, such as an unset API key. A tick leaves such
// a provider out: a local configuration error must not open shared breakers
// or alert for the hosts that are configured.
type Configurable interface {
	// ConfigError names what is missing and how to fix it; nil when usable.
	ConfigError() error
}

// ConfigError is a local configuration problem that leaves a tick nothing to
// work with (no usable finder, or an unusable verifier). The CLI exits 2.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// configError is p's ConfigError when p is Configurable.
func configError(p any) error {
	if c, ok := p.(Configurable); ok {
		return c.ConfigError()
	}
	return nil
}

// Credits is what a provider's account endpoint says of the account behind
// an API key.
type Credits struct {
	// Remaining is how many billed calls the account has left.
	Remaining int64
	// ResetAt is when the plan's credits renew; zero when the provider
	// does not say.
	ResetAt time.Time
}

// CreditReporter is implemented by adapters whose provider reports the
// key's remaining credits. Reading them costs nothing: no credit, no
// ledger row.
type CreditReporter interface {
	Name() string
	Credits(ctx context.Context) (Credits, error)
}
