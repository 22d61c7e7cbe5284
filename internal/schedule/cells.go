package schedule

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Cell is one independent Postgres cluster with its own workspaces and
// its own set of ticks (docs/scaling.md). Its units carry its name, never
// its URL (which may hold a password): its env file or Secret does.
type Cell struct {
	Name string
}

// cellName is what a cell may be called: a Kubernetes name part, a systemd
// unit name part and a file name alike.
var cellName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// ParseCells reads --database-urls entries, NAME=URL or a postgres:// URL
// named after its database, in order. Names must differ.
func ParseCells(entries []string) ([]Cell, error) {
	var cells []Cell
	seen := map[string]bool{}
	for i, e := range entries {
		name, rawURL, named := strings.Cut(e, "=")
		if !named || strings.Contains(name, "://") {
			rawURL = e
			var err error
			if name, err = nameFromURL(rawURL); err != nil {
				return nil, fmt.Errorf("database URL #%d: %v", i+1, err)
			}
		} else if !isPostgresURL(rawURL) {
			return nil, fmt.Errorf("database URL #%d: give each cell as NAME=postgres://... or a postgres:// URL (a key=value connection string cannot name its cell)", i+1)
		}
		if !cellName.MatchString(name) {
			return nil, fmt.Errorf("cell %q: use a name of lowercase letters, digits and - (at most 32), e.g. eu-1=postgres://...", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("two cells named %q: name them NAME=URL", name)
		}
		seen[name] = true
		cells = append(cells, Cell{Name: name})
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("no database URL given")
	}
	return cells, nil
}

func isPostgresURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}

// nameFromURL names a cell after a postgres:// URL's database, lowercased
// with anything else than letters and digits turned to -.
func nameFromURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || !isPostgresURL(raw) {
		return "", fmt.Errorf("not a postgres:// URL; give it as NAME=postgres://...")
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		return "", fmt.Errorf("the URL names no database to name its cell after; give it as NAME=URL")
	}
	name := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(db), "-"), "-")
	return name, nil
}

// ForCell is the plan for cell, the i-th (from 0) of several: its units
// are named rindactl-CELL-KIND, load DIR/CELL.env (DIR: the plan's env
// file's directory) and read the Secret rindactl-CELL; its unsubscribe
// server, rindactl-CELL-unsubscribe, listens on the plan's port + i, so the
// cells' servers can share a host.
func (p Plan) ForCell(c Cell, i int) (Plan, error) {
	p = p.withDefaults()
	p.Cell = c.Name
	p.EnvFile = path.Join(path.Dir(p.EnvFile), c.Name+".env")
	p.Secret = SecretDefault + "-" + c.Name
	if p.Unsubscribe != "" {
		port, err := parseListen(p.Unsubscribe)
		if err != nil {
			return p, err
		}
		host, _, _ := net.SplitHostPort(p.Unsubscribe)
		if port+i > 65535 {
			return p, fmt.Errorf("cell %s: port %d + %d is past 65535", c.Name, port, i)
		}
		p.Unsubscribe = net.JoinHostPort(host, strconv.Itoa(port+i))
	}
	return p, nil
}

// unitName is a unit's name: rindactl-WHAT, or rindactl-CELL-WHAT for a
// cell's.
func (p Plan) unitName(what string) string {
	if p.Cell != "" {
		return "rindactl-" + p.Cell + "-" + what
	}
	return "rindactl-" + what
}
