package cliio

import (
	"strconv"
	"strings"
	"testing"
)

func TestWriteList(t *testing.T) {
	t.Parallel()
	type row struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	l := List[row]{Key: "things", Rows: []row{{"a", 1}, {"longer", 22}}, Empty: "no things",
		Header: []string{"name", "count"}, Numeric: []int{1}, Cells: func(r row) []string { return []string{r.Name, strconv.Itoa(r.Count)} }}

	ios, _, out, _ := Test()
	if err := WriteList(ios, FormatText, l); err != nil {
		t.Fatal(err)
	}
	want := "name    count\n" + strings.Repeat("─", 13) + "\na           1\nlonger     22\n"
	if out.String() != want {
		t.Errorf("table:\n%q, want\n%q", out.String(), want)
	}

	out.Reset()
	if err := WriteList(ios, FormatJSON, l); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"things\": [\n    {\n      \"name\": \"a\",\n      \"count\": 1\n    },\n    {\n      \"name\": \"longer\",\n      \"count\": 22\n    }\n  ]\n}\n"; out.String() != want {
		t.Errorf("json: %q", out.String())
	}

	out.Reset()
	l.Rows = []row{}
	if err := WriteList(ios, FormatText, l); err != nil || out.String() != "no things\n" {
		t.Errorf("empty text: %q %v", out.String(), err)
	}
	out.Reset()
	if err := WriteList(ios, FormatJSON, l); err != nil || out.String() != "{\n  \"things\": []\n}\n" {
		t.Errorf("empty json: %q %v", out.String(), err)
	}
}
