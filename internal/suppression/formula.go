package suppression

import "strings"

// formulaLead are the characters that make a spreadsheet read a cell as a
// formula when it starts with one (OWASP, CSV injection): = + - @, tab
// and carriage return.
const formulaLead = "=+-@\t\r"

// startsFormula reports whether cell, after any leading apostrophes, starts
// with a formula character.
func startsFormula(cell string) bool {
	rest := strings.TrimLeft(cell, "'")
	return rest != "" && strings.IndexByte(formulaLead, rest[0]) >= 0
}

// neutralise is a cell as the export writes it: one apostrophe before a
// cell a spreadsheet would run as a formula (OWASP's rule). A cell that
// already starts with apostrophes before such a character gets one more,
// so that restore gives back exactly the value.
func neutralise(cell string) string {
	if startsFormula(cell) {
		return "'" + cell
	}
	return cell
}

// restore is a cell as the import reads it: the one apostrophe neutralise
// added is dropped, and only before a formula character, so "'=x" is "=x"
// and "o'brien" or "'x" stay as they are.
func restore(cell string) string {
	if strings.HasPrefix(cell, "'") && startsFormula(cell) {
		return cell[1:]
	}
	return cell
}
