package demo

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// The seeded incident's names.
const (
	workspaceName = "acme"
	campaignName  = "incident-replay"
)

var (
	firstNames = []string{"Ada", "Bora", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ines", "Jun",
		"Kofi", "Lea", "Mina", "Nils", "Oren", "Priya", "Quinn", "Rosa", "Sami", "Tae",
		"Uma", "Vera", "Wen", "Xavi", "Yuna", "Zeno", "Aiko", "Bruno", "Chloe", "Dmitri"}
	lastNames = []string{"Kim", "Park", "Lee", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim",
		"Han", "Oh", "Seo", "Shin", "Kwon", "Hwang", "Ahn", "Song", "Yoo", "Hong",
		"Jeon", "Ko", "Moon", "Yang", "Son", "Bae", "Baek", "Heo", "Nam", "Noh"}
	companies = []string{"Northwind", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne",
		"Tyrell", "Cyberdyne", "Soylent", "Wonka", "Acme", "Gringotts", "Monarch", "Oscorp",
		"Pied Piper", "Aperture", "Black Mesa", "Dunder"}
)

// person is the i-th seeded lead's name and company; names repeat only
// after 18,000 leads.
func person(i int) (first, last, company, domain string) {
	first = firstNames[(i/len(lastNames))%len(firstNames)]
	last = lastNames[i%len(lastNames)]
	company = companies[(i/(len(firstNames)*len(lastNames)))%len(companies)]
	domain = strings.ToLower(strings.ReplaceAll(company, " ", "")) + ".example"
	return first, last, company, domain
}

// writeLeads writes the lead CSV: toEnrich leads without an email (queued
// for enrichment) and overdue leads with one (they get the sequence), and
// the external ids of the latter, one a line, for `enroll --leads`.
func writeLeads(dir string, toEnrich, overdue int) (csvPath, enrollPath string, err error) {
	csvPath, enrollPath = filepath.Join(dir, "leads.csv"), filepath.Join(dir, "enroll.txt")
	f, err := os.Create(csvPath)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	keys, err := os.Create(enrollPath)
	if err != nil {
		return "", "", err
	}
	defer keys.Close()
	w, kw := bufio.NewWriter(f), bufio.NewWriter(keys)
	fmt.Fprintln(w, "external_id,first_name,last_name,company,company_domain,email")
	for i := range toEnrich {
		first, last, company, domain := person(i)
		fmt.Fprintf(w, "enrich-%06d,%s,%s,%s,%s,\n", i, first, last, company, domain)
	}
	for i := range overdue {
		first, last, company, domain := person(i + toEnrich)
		id := fmt.Sprintf("overdue-%06d", i)
		fmt.Fprintf(w, "%s,%s,%s,%s,%s,%s.%s.%d@%s\n", id, first, last, company, domain,
			strings.ToLower(first), strings.ToLower(last), i, domain)
		fmt.Fprintln(kw, id)
	}
	if err := w.Flush(); err != nil {
		return "", "", err
	}
	return csvPath, enrollPath, kw.Flush()
}

// writeCampaign writes the campaign YAML: mailboxes on the demo's SMTP
// server, no sending window, and steps follow-ups that fall due every
// stepDelay, so the sequence has mail to send in every round.
func writeCampaign(dir, smtpURL string, mailboxes, steps int, stepDelay time.Duration) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace: %s\nname: %s\nmailboxes:\n", workspaceName, campaignName)
	for i := 1; i <= mailboxes; i++ {
		fmt.Fprintf(&b, "  - address: sdr%02d@acme.example\n    smtp_url: %s\n", i, smtpURL)
	}
	b.WriteString("steps:\n")
	for s := 1; s <= steps; s++ {
		if s == 1 {
			b.WriteString("  - delay: 0s\n    subject: \"Quick question, {{.FirstName}}\"\n    body: \"Hi {{.FirstName}}, does {{.Company}} still do outbound by hand?\"\n")
			continue
		}
		fmt.Fprintf(&b, "  - delay: %s\n    body: \"Following up (%d of %d).\"\n", stepDelay, s, steps)
	}
	path := filepath.Join(dir, "campaign.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// seed loads the incident through the real commands, then makes every
// enrolled step overdue, as the 30,339 steps were when the loader starved.
func seed(ctx context.Context, r *runner, pool *pgxpool.Pool, dir string, cfg Config, smtpURL string, stepDelay time.Duration) error {
	csvPath, enrollPath, err := writeLeads(dir, cfg.Leads, cfg.Overdue)
	if err != nil {
		return fmt.Errorf("writing the demo's lead CSV: %w", err)
	}
	campaignPath, err := writeCampaign(dir, smtpURL, cfg.Mailboxes, cfg.Rounds, stepDelay)
	if err != nil {
		return fmt.Errorf("writing the demo's campaign: %w", err)
	}
	if _, err := r.run(ctx, "import-leads", "import", "leads", "--workspace", workspaceName, csvPath); err != nil {
		return err
	}
	if _, err := r.run(ctx, "import-campaign", "import", "campaign", campaignPath); err != nil {
		return err
	}
	if cfg.Overdue > 0 {
		if _, err := r.run(ctx, "enroll", "enroll", "--workspace", workspaceName, "--campaign", campaignName, "--leads", enrollPath); err != nil {
			return err
		}
	}
	if err := benchstore.DemoStepsOverdue(ctx, pool); err != nil {
		return fmt.Errorf("making the enrolled steps overdue: %w", err)
	}
	return nil
}
