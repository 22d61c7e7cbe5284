package store

import (
	"reflect"
	"strings"
	"testing"
)

// Issue 41: hand-run parameters were bound by the order of the params
// struct's fields, so two same-typed fields swapped compiled and sent each
// other's values. byName binds them by name: the fields' order does not
// matter, and a struct that names them wrongly does not bind.
func TestByNameBindsByName(t *testing.T) {
	t.Parallel()
	const sql = `SELECT @send_statuses::text[], @send_errors::text[], @tick_id::text, @send_statuses::text[]`
	type declared struct {
		TickID       string   `db:"tick_id"`
		SendStatuses []string `db:"send_statuses"`
		SendErrors   []string `db:"send_errors"`
	}
	type swapped struct {
		TickID       string   `db:"tick_id"`
		SendErrors   []string `db:"send_errors"`
		SendStatuses []string `db:"send_statuses"`
	}
	want := []any{[]string{"sent"}, []string{"refused"}, "t1"}
	d := byName[declared](sql)
	if got := d.args(declared{TickID: "t1", SendStatuses: []string{"sent"}, SendErrors: []string{"refused"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("args %v, want %v", got, want)
	}
	s := byName[swapped](sql)
	if got := s.args(swapped{TickID: "t1", SendStatuses: []string{"sent"}, SendErrors: []string{"refused"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("fields declared in another order: args %v, want %v", got, want)
	}
	if want := `SELECT $1::text[], $2::text[], $3::text, $1::text[]`; d.sql != want || s.sql != want {
		t.Errorf("sql %q and %q, want %q", d.sql, s.sql, want)
	}
}

func TestByNameRefusesAMismatch(t *testing.T) {
	t.Parallel()
	const sql = `SELECT @send_statuses::text[], @send_errors::text[]`
	for _, c := range []struct {
		name string
		bind func()
		want string
	}{
		{"names swapped", func() {
			byName[struct {
				SendStatuses []string `db:"send_errors"`
				SendErrors   []string `db:"send_statuses"`
			}](sql)
		}, `SendStatuses is tagged db:"send_errors"`},
		{"untagged", func() {
			byName[struct {
				SendStatuses []string `db:"send_statuses"`
				SendErrors   []string
			}](sql)
		}, `SendErrors is tagged db:""`},
		{"a name no field has", func() {
			byName[struct {
				SendStatuses []string `db:"send_statuses"`
			}](sql)
		}, "argument send_errors found in sql query but not present"},
		{"a field the statement does not use", func() {
			byName[struct {
				SendStatuses []string `db:"send_statuses"`
				SendErrors   []string `db:"send_errors"`
				SendMetrics  []string `db:"send_metrics"`
			}](sql)
		}, "argument send_metrics of StrictNamedArgs not found in sql query"},
	} {
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.Contains(r, c.want) {
					t.Errorf("%s: panic %q, want one saying %q", c.name, r, c.want)
				}
			}()
			c.bind()
		}()
	}
}
