package sequence

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/template"
	"unicode"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Lead holds the fields a template may use, and where to send.
type Lead struct {
	FirstName string
	LastName  string
	Company   string
	Email     string
	Domain    string
	// UnsubscribeToken is the enrollment's unsubscribe token (set by the
	// email tick): {{.UnsubscribeToken}} lets an unsubscribe_url of your
	// own pass it to `rindactl unsubscribe apply`.
	UnsubscribeToken string

	// unsubscribeURL is what {{.UnsubscribeURL}} renders; Compose sets it.
	unsubscribeURL string
}

// UnsubscribeURL is {{.UnsubscribeURL}}: where the recipient unsubscribes.
// A template that uses it fails to render, rather than send a message
// without a working link, when no unsubscribe URL is configured.
func (l Lead) UnsubscribeURL() (string, error) {
	if l.unsubscribeURL == "" {
		return "", errNoUnsubscribeURL
	}
	return l.unsubscribeURL, nil
}

var errNoUnsubscribeURL = errors.New("{{.UnsubscribeURL}} has no URL to render: set " + unsubscribe.BaseURLEnv + " for the email tick (docs/email.md, \"Unsubscribe\"), or the campaign's unsubscribe_url")

// templateProbe is the lead a template is checked against at import: every
// field is known, {{.UnsubscribeURL}} included.
var templateProbe = Lead{unsubscribeURL: "https://unsubscribe.invalid/token"}

// fieldTemplate is a text/template restricted to Lead's fields: unknown
// fields fail at import (the template is executed once against a zero Lead)
// rather than at send time.
type fieldTemplate struct {
	t *template.Template
}

func parseFieldTemplate(path, text string) (*fieldTemplate, error) {
	t, err := template.New(path).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid template: %s", path, strings.TrimPrefix(err.Error(), "template: "))
	}
	ft := &fieldTemplate{t: t}
	if _, err := ft.render(templateProbe); err != nil {
		return nil, fmt.Errorf("%s: invalid template: %s (known fields: .FirstName .LastName .Company .Email .Domain .UnsubscribeURL .UnsubscribeToken)", path, strings.TrimPrefix(err.Error(), "template: "))
	}
	return ft, nil
}

func (ft *fieldTemplate) render(lead Lead) (string, error) {
	var b strings.Builder
	if err := ft.t.Execute(&b, lead); err != nil {
		return "", err
	}
	return b.String(), nil
}

// singleLine makes a value safe for a header or a template field: every
// control character (CR and LF above all) becomes a space, so a lead's name
// can never start a new header line.
func singleLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// sanitized returns the lead with every field reduced to one clean line.
func (l Lead) sanitized() Lead {
	return Lead{
		FirstName:        singleLine(l.FirstName),
		LastName:         singleLine(l.LastName),
		Company:          singleLine(l.Company),
		Email:            singleLine(l.Email),
		Domain:           singleLine(l.Domain),
		UnsubscribeToken: singleLine(l.UnsubscribeToken),
		unsubscribeURL:   singleLine(l.unsubscribeURL),
	}
}

func (l Lead) queryEscaped() Lead {
	return Lead{
		FirstName:        url.QueryEscape(l.FirstName),
		LastName:         url.QueryEscape(l.LastName),
		Company:          url.QueryEscape(l.Company),
		Email:            url.QueryEscape(l.Email),
		Domain:           url.QueryEscape(l.Domain),
		UnsubscribeToken: url.QueryEscape(l.UnsubscribeToken),
	}
}
