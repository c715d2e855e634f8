// Package mdblock finds and rewrites the generated blocks of a Markdown file
// (the README): one marker syntax for every generator, the way stern's
// hack/update-readme writes its flag table:
//
//	<!-- BEGIN GENERATED KIND: ARGS (make TARGET) -->
//	...written by `make TARGET`...
//	<!-- END GENERATED -->
//
// KIND says what the block holds (checks, flags, bench), ARGS (optional,
// after a colon) what to put there, and TARGET the make target that writes
// it: `make docs` writes the checks and flags blocks (internal/docgen),
// `make bench` the bench block (hack/bench). Each generator rewrites only
// the blocks of its own target.
package mdblock

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

const (
	// BeginPrefix starts every begin marker.
	BeginPrefix = "<!-- BEGIN GENERATED "
	// EndMarker closes a generated block.
	EndMarker = "<!-- END GENERATED -->"
)

var beginRE = regexp.MustCompile(`^<!-- BEGIN GENERATED ([a-z]+)(?::\s*(.*?))? \(make ([a-z-]+)\) -->$`)

// Block is one generated block: its marker's parts and the line indexes
// (0-based) of its begin and end markers.
type Block struct {
	Kind, Args, Target string
	Begin, End         int
}

// Marker is the begin marker of a block of kind with args written by
// `make target`.
func Marker(kind, args, target string) string {
	if args != "" {
		return BeginPrefix + kind + ": " + args + " (make " + target + ") -->"
	}
	return BeginPrefix + kind + " (make " + target + ") -->"
}

// Lines splits text into lines (CRLF read as LF), as Parse and Rewrite take it.
func Lines(text string) []string {
	return strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
}

// Parse returns the blocks of lines (of the file named file) in order. It
// fails, naming the file and line (1-based) of each problem, on a malformed begin marker and on a begin
// marker with no EndMarker before the next begin marker or the end.
func Parse(file string, lines []string) ([]Block, error) {
	var blocks []Block
	var errs []error
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], BeginPrefix) {
			continue
		}
		m := beginRE.FindStringSubmatch(lines[i])
		if m == nil {
			errs = append(errs, fmt.Errorf("%s line %d: malformed marker %q (want %q)", file, i+1, lines[i], Marker("KIND", "ARGS", "TARGET")))
			continue
		}
		b := Block{Kind: m[1], Args: strings.TrimSpace(m[2]), Target: m[3], Begin: i, End: -1}
		for j := i + 1; j < len(lines); j++ {
			if lines[j] == EndMarker {
				b.End = j
				break
			}
			if strings.HasPrefix(lines[j], BeginPrefix) {
				break
			}
		}
		if b.End < 0 {
			errs = append(errs, fmt.Errorf("%s line %d: no %s after the marker", file, i+1, EndMarker))
			continue
		}
		blocks = append(blocks, b)
		i = b.End
	}
	return blocks, errors.Join(errs...)
}

// Rewrite returns lines with the body of each block in blocks (from Parse,
// in order) replaced by bodies[i]; the markers and everything outside the
// blocks are kept.
func Rewrite(lines []string, blocks []Block, bodies []string) []string {
	var out []string
	prev := 0
	for i, b := range blocks {
		out = append(out, lines[prev:b.Begin+1]...)
		out = append(out, bodies[i])
		prev = b.End
	}
	return append(out, lines[prev:]...)
}
