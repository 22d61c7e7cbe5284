package schedule

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"time"
)

// Format is a kind of deployment unit Render can write.
type Format string

const (
	FormatCrontab    Format = "crontab"
	FormatSystemd    Format = "systemd"
	FormatKubernetes Format = "kubernetes"
)

// Formats lists every format Render supports.
var Formats = []Format{FormatCrontab, FormatSystemd, FormatKubernetes}

// ParseFormat validates a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("format %q: use crontab, systemd or kubernetes", s)
}

// Defaults for the Plan fields.
const (
	BinaryDefault  = "/usr/local/bin/rindactl"
	EnvFileDefault = "/etc/rindactl/env"
	ImageRepo      = "ghcr.io/rindactl/rindactl"
	ImageDefault   = ImageRepo + ":latest"
	SecretDefault  = "rindactl"
)

// releaseTag is a version an image can be tagged with (v1.4.0, 1.4.0-rc1).
var releaseTag = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]{1,100})?$`)

// ImageFor is the image of the binary's own version, so the CronJobs run
// what generated them; a development build (no release version) gets
// ImageDefault.
func ImageFor(version string) string {
	if releaseTag.MatchString(version) {
		return ImageRepo + ":" + version
	}
	return ImageDefault
}

// ShutdownTimeoutDefault is how long a tick gets after SIGTERM (or after its
// --max-duration) to finish or release its in-flight rows before it is
// killed; generated units and `rindactl run` use the same bound.
const ShutdownTimeoutDefault = 30 * time.Second

// Plan is what to deploy: the ticks and where they find their binary,
// configuration and secrets.
type Plan struct {
	Ticks   []Tick
	Binary  string // absolute path of rindactl on the host (crontab, systemd)
	EnvFile string // KEY=value file with DATABASE_URL and provider keys (crontab, systemd)
	User    string // systemd user; empty means DynamicUser=yes
	Image   string // container image (kubernetes)
	Secret  string // Secret holding the environment (kubernetes)
	// Unsubscribe is where `rindactl unsubscribe serve` listens (host:port;
	// the container's port for kubernetes); empty: no unit for it.
	Unsubscribe string
	// Cell names the database these ticks serve when there are several
	// (ForCell); "" for one database.
	Cell string
}

// File is one generated file: its conventional name and its content.
type File struct {
	Name    string
	Content string
}

var (
	//go:embed templates
	templateFS embed.FS
	templates  = template.Must(template.New("").
			Funcs(template.FuncMap{"add": func(a, b int64) int64 { return a + b }}).
			ParseFS(templateFS, "templates/*.tmpl"))

	safePath = regexp.MustCompile(`^/[A-Za-z0-9._/+@-]*$`)
	userName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	image    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*$`)
)

// Render writes the plan's units in the format. It fails only on input the
// format cannot carry: a path or name it would have to quote, or a spec
// systemd cannot express.
func Render(format Format, plan Plan) ([]File, error) {
	plan = plan.withDefaults()
	if err := plan.validate(); err != nil {
		return nil, err
	}
	units := make([]unit, 0, len(plan.Ticks))
	for _, t := range plan.Ticks {
		if t.Spec.Zone() != "" && format == FormatCrontab {
			return nil, fmt.Errorf("%s tick: cron spec %q has a time zone, which a crontab line cannot carry (cron fires in the host's zone); drop the CRON_TZ= prefix, or use systemd or kubernetes", t.Kind, t.Spec)
		}
		if t.Spec.HasSeconds() && format != FormatSystemd {
			return nil, fmt.Errorf("%s tick: cron spec %q has a seconds field, which %s cannot run; use five fields", t.Kind, t.Spec, format)
		}
		u := unit{
			Tick:            t,
			Name:            "rindactl-" + string(t.Kind),
			Title:           "rindactl " + strings.Join(t.Kind.Args(), " "),
			Command:         strings.Join(t.Command(), " "),
			MaxSeconds:      int64(t.MaxDuration() / time.Second),
			ShutdownSeconds: int64(ShutdownTimeoutDefault / time.Second),
		}
		if plan.Cell != "" {
			u.Name = plan.unitName(string(t.Kind))
			u.Title += " (cell " + plan.Cell + ")"
		}
		if format == FormatSystemd {
			cal, err := t.Spec.OnCalendar()
			if err != nil {
				return nil, fmt.Errorf("%s tick: %w", t.Kind, err)
			}
			u.OnCalendar = cal
		}
		units = append(units, u)
	}
	return files(format, plan, units)
}

// files renders units in format: one file for every tick (crontab,
// kubernetes) or a service and a timer per tick (systemd), and the
// unsubscribe server's when the plan has one.
func files(format Format, plan Plan, units []unit) ([]File, error) {
	switch format {
	case FormatCrontab, FormatKubernetes:
		// One file holds every tick.
		tmpl, name := "crontab.tmpl", "rindactl.crontab"
		if format == FormatKubernetes {
			tmpl, name = "kubernetes.yaml.tmpl", "rindactl-cronjobs.yaml"
		}
		content, err := execute(tmpl, struct {
			Plan  Plan
			Units []unit
		}{plan, units})
		if err != nil {
			return nil, err
		}
		server, err := unsubscribeFiles(format, plan)
		return append([]File{{Name: name, Content: content}}, server...), err
	case FormatSystemd:
		var files []File
		for _, u := range units {
			data := struct {
				Plan Plan
				unit
			}{plan, u}
			service, err := execute("systemd.service.tmpl", data)
			if err != nil {
				return nil, err
			}
			timer, err := execute("systemd.timer.tmpl", data)
			if err != nil {
				return nil, err
			}
			files = append(files, File{u.Name + ".service", service}, File{u.Name + ".timer", timer})
		}
		server, err := unsubscribeFiles(format, plan)
		return append(files, server...), err
	}
	return nil, fmt.Errorf("format %q: use crontab, systemd or kubernetes", format)
}

// unit is one tick as the templates see it.
type unit struct {
	Tick
	Name            string // rindactl-<kind>: unit, tag and CronJob name
	Title           string // the command a human would type, for descriptions
	Command         string // tick arguments after the binary
	OnCalendar      string
	MaxSeconds      int64
	ShutdownSeconds int64
}

func (p Plan) withDefaults() Plan {
	if p.Binary == "" {
		p.Binary = BinaryDefault
	}
	if p.EnvFile == "" {
		p.EnvFile = EnvFileDefault
	}
	if p.Image == "" {
		p.Image = ImageDefault
	}
	if p.Secret == "" {
		p.Secret = SecretDefault
	}
	return p
}

// validate rejects values the templates would have to quote or escape
// (spaces, quotes, systemd's % specifiers, shell metacharacters).
func (p Plan) validate() error {
	if len(p.Ticks) == 0 {
		return fmt.Errorf("no ticks to schedule")
	}
	if !safePath.MatchString(p.Binary) {
		return fmt.Errorf("binary %q: use an absolute path of letters, digits and ._/+@-", p.Binary)
	}
	if !safePath.MatchString(p.EnvFile) {
		return fmt.Errorf("env file %q: use an absolute path of letters, digits and ._/+@-", p.EnvFile)
	}
	if p.User != "" && !userName.MatchString(p.User) {
		return fmt.Errorf("user %q: use a system user name like rindactl (lowercase, digits, _ and -)", p.User)
	}
	if !image.MatchString(p.Image) {
		return fmt.Errorf("image %q: use a reference like %s", p.Image, ImageDefault)
	}
	if p.Cell != "" && !cellName.MatchString(p.Cell) {
		return fmt.Errorf("cell %q: use lowercase letters, digits and -", p.Cell)
	}
	if !dnsLabel.MatchString(p.Secret) {
		return fmt.Errorf("secret %q: use a Kubernetes name like %s", p.Secret, SecretDefault)
	}
	return nil
}

func execute(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return buf.String(), nil
}
