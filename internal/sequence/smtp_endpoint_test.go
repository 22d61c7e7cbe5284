package sequence

import (
	"strings"
	"testing"
)

func TestParseSMTPURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url  string
		want SMTPEndpoint
	}{
		{"smtp://smtp.example.com", SMTPEndpoint{Host: "smtp.example.com", Port: 587, TLS: TLSOpportunistic}},
		// A password may only travel encrypted to a remote host.
		{"smtp://u@smtp.example.com:25", SMTPEndpoint{Host: "smtp.example.com", Port: 25, Username: "u", TLS: TLSRequired}},
		{"smtp://u@127.0.0.1:2525", SMTPEndpoint{Host: "127.0.0.1", Port: 2525, Username: "u", TLS: TLSOpportunistic}},
		{"smtp://u@[::1]:2525", SMTPEndpoint{Host: "::1", Port: 2525, Username: "u", TLS: TLSOpportunistic}},
		{"smtp://localhost:2525?tls=required", SMTPEndpoint{Host: "localhost", Port: 2525, TLS: TLSRequired}},
		{"smtps://u@smtp.example.com", SMTPEndpoint{Host: "smtp.example.com", Port: 465, Username: "u", TLS: TLSImplicit}},
	}
	for _, tc := range cases {
		got, err := ParseSMTPURL(tc.url)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %+v, want %+v", tc.url, got, tc.want)
		}
		if _, err := ParseSMTPURL(got.String()); err != nil {
			t.Errorf("%s: String() %q does not parse back: %v", tc.url, got.String(), err)
		}
	}
}

func TestParseSMTPURLRejects(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"":                                "required",
		"smtp://u:s3cret@host":            "holds a password",
		"ftp://host":                      "scheme",
		"smtp://host/path":                "has a path",
		"smtp://host:99999":               "invalid port",
		"smtp://host?auth=x":              "unknown query parameter",
		"smtps://host?tls=opportunistic":  "smtp:// only",
		"smtp://host?tls=off":             "tls=",
		"smtp://":                         "no host",
		"smtp://u:s3cret@host:bad%zz/x":   "not a URL",
		"smtp://u:s3cret@[::1:2525?tls=a": "not a URL",
	} {
		_, err := ParseSMTPURL(url)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", url, err, want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error leaks the password: %v", url, err)
		}
	}
}
