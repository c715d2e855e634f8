// Package citations holds the repository's citation rule and its test: what
// the project ships (code comments, docs, help, messages, YAML) cites public
// pages and public source files by URL, never a file only its developers had
// (notes named after work items, numbered source dumps, development-machine
// paths). Forbidden returns the rule a line breaks, if any.
package citations

import "regexp"

// rules are the forbidden patterns, built from parts so that this file does
// not match them itself. Each is a regular expression over one line.
var rules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"numbered source document (\"seed N\")", regexp.MustCompile(`(?i)\bs` + `eed [0-9]`)},
	{"numbered source-document file name", regexp.MustCompile(`\b[0-9]{3}_[0-9a-f]{16}\b`)},
	{"private chart notes", regexp.MustCompile(`chart` + `-facts`)},
	{"absolute path of a development machine's shared folder", regexp.MustCompile(`(^|[^.])/` + `shared/fixtures`)},
	{"README part named after a work item", regexp.MustCompile(`docs/readme/` + `issue`)},
	{"private plugin notes", regexp.MustCompile(`plugin` + `-conventions`)},
	{"the private contract notes (cite the README's sections)", regexp.MustCompile(`\b(CHECKS|peers)` + `\.md\b`)},
}

// Forbidden returns the name of the first rule line breaks, or "" when the
// line cites nothing private.
func Forbidden(line string) string {
	for _, r := range rules {
		if r.re.MatchString(line) {
			return r.name
		}
	}
	return ""
}
