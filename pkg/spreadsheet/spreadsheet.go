// Package spreadsheet keeps the CSV files we write safe to open in a
// spreadsheet: a cell that a spreadsheet would read as a formula is
// written as text.
package spreadsheet

import "strings"

// Text returns cell as a spreadsheet takes it for text: one that begins
// with =, +, -, @, a tab or a carriage return is prefixed with ' (OWASP's
// rule against CSV injection), so that opening the file runs no formula
// that a payee's reason, an external id or a reference carried in.
func Text(cell string) string {
	if cell != "" && strings.IndexByte("=+-@\t\r", cell[0]) >= 0 {
		return "'" + cell
	}
	return cell
}
