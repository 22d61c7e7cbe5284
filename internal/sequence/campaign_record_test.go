package sequence

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
)

// Every field import keeps, read back from the store's record, is the
// campaign that was imported: the domain values and the compiled templates.
func TestStoredCampaignLoadsAsImported(t *testing.T) {
	t.Parallel()
	doc := `
workspace: acme
name: q4
unsubscribe_url: https://acme.test/u?e={{.Email}}
follow_ups_first: false
bounce_guard: {rate: 2.5%, in_a_row: 4}
ramp: {start: 20, step: 10, every: 2d, max: 200}
gap: 60s..180s
window: {timezone: Europe/Paris, days: [mon, wed, fri], start: "09:30", end: "17:00"}
mailboxes:
  - address: sdr01@acme.test
    name: Ann Lee
    smtp_url: smtps://sdr01@smtp.acme.test
    password_env: SDR01_PASSWORD
    imap_url: imaps://imap.acme.test
    daily_cap: 150
    helo: out.acme.test
    tls_ca: /etc/rindactl/ca.pem
    verp: true
  - address: ann@acme.test
    smtp_url: smtp://smtp.office365.com:587
    daily_cap: 40
    gap: 0s..0s
    auth: {method: oauth2, provider: microsoft, tenant: acme.onmicrosoft.com, client_id_env: MS_ID, client_secret_env: MS_SECRET}
steps:
  - delay: 0s
    subject: "Hi {{.FirstName}}"
    body: "Body for {{.Company}}"
  - delay: 72h
    body: "Follow {{.FirstName}}"
`
	c, err := ParseCampaign(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	back, err := campaignFromRecord(c.Record())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Mailboxes, c.Mailboxes) {
		t.Errorf("mailboxes after the store:\n%+v\nwant\n%+v", back.Mailboxes, c.Mailboxes)
	}
	if back.Workspace != c.Workspace || back.Name != c.Name || back.UnsubscribeURL != c.UnsubscribeURL ||
		back.FollowUpsFirst != c.FollowUpsFirst || back.BounceGuard != c.BounceGuard {
		t.Errorf("campaign after the store = %+v, want %+v", back, c)
	}
	if w, bw := c.Window, back.Window; bw == nil || bw.Timezone != w.Timezone || bw.Days != w.Days || bw.Start != w.Start || bw.End != w.End ||
		bw.loc.String() != w.loc.String() {
		t.Errorf("window after the store = %+v, want %+v", bw, w)
	}
	lead := Lead{FirstName: "Ada", Company: "Acme", Email: "ada@lead.test"}
	for i := range c.Steps {
		want, err := c.Compose(i, lead, c.Mailboxes[0], "m1@acme.test", []string{"m0@acme.test"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := back.Compose(i, lead, back.Mailboxes[0], "m1@acme.test", []string{"m0@acme.test"})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("step %d after the store = %+v (%v), want %+v", i, got, err, want)
		}
	}
}

// A stored campaign is loaded straight into the domain types: the load
// builds no YAML file struct and runs no file validation, which import
// did once (issue 41 item 5: every batch load re-stringified and
// re-validated the campaign).
func TestStoredCampaignSkipsTheFileStruct(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "campaign_record.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name == "Record" {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if strings.HasSuffix(n.Name, "File") || strings.HasPrefix(n.Name, "check") {
					t.Errorf("%s uses %s: a stored campaign loads without the file struct or its checks", fn.Name.Name, n.Name)
				}
			case *ast.SelectorExpr:
				if n.Sel.Name == "validate" || n.Sel.Name == "file" {
					t.Errorf("%s calls .%s: a stored campaign is not validated again", fn.Name.Name, n.Sel.Name)
				}
			}
			return true
		})
	}
}
