package reporters

import (
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwarp"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// minWrapWidth is the narrowest text column wrapIndent wraps to: on a
// terminal narrower than the indent plus this, lines are cut at the
// terminal width instead of being wrapped into a sliver.
const minWrapWidth = 20

// wrapIndent word-wraps s (one line of text) to lines of at most width
// display columns, the first prefixed by first spaces and the rest by rest
// spaces. A word wider than the room left is cut (hard-wrapped). width 0
// means no limit: s is returned indented, as one line. Display width is
// tablewriter's (East Asian wide runes count 2).
func wrapIndent(s string, width, first, rest int) []string {
	s = strings.TrimRight(s, " ")
	if width <= 0 {
		return []string{strings.Repeat(" ", first) + s}
	}
	if first > width-minWrapWidth {
		first = max(0, min(first, width-minWrapWidth))
	}
	if rest > width-minWrapWidth {
		rest = max(0, min(rest, width-minWrapWidth))
	}
	// Keep s's own leading spaces (aligned continuation lines of a message).
	lead := len(s) - len(strings.TrimLeft(s, " "))
	first += lead
	rest += lead
	body := strings.TrimLeft(s, " ")
	if body == "" {
		return []string{""}
	}
	if l := strings.Repeat(" ", first) + body; twwidth.Width(l) <= width {
		return []string{l} // fits: spacing kept as it is
	}
	var out []string
	indent := first
	for _, para := range splitWords(body, width-max(first, rest)) {
		out = append(out, strings.Repeat(" ", indent)+para)
		indent = rest
	}
	// The first line may be narrower than the rest (first > rest) or wider;
	// re-check every line and cut what still does not fit.
	for i, l := range out {
		if twwidth.Width(l) > width {
			out[i] = cut(l, width)
		}
	}
	return out
}

// splitWords wraps text to lines of at most lim columns with tablewriter's
// word wrapper, then cuts any word longer than lim into lim-wide pieces.
func splitWords(text string, lim int) []string {
	if lim < 1 {
		lim = 1
	}
	var words []string
	for _, word := range twwarp.SplitWords(text) {
		for twwidth.Width(word) > lim {
			head := cut(word, lim)
			words = append(words, head)
			word = word[len(head):]
		}
		if word != "" {
			words = append(words, word)
		}
	}
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	for _, l := range twwarp.WrapWords(words, 1, lim, 1e5) {
		lines = append(lines, strings.Join(l, " "))
	}
	return lines
}

// cut returns the longest prefix of s that is at most width display columns.
func cut(s string, width int) string {
	w := 0
	for i, r := range s {
		rw := twwidth.Width(string(r))
		if w+rw > width {
			if i == 0 {
				return string(r) // never return nothing: a rune wider than width
			}
			return s[:i]
		}
		w += rw
	}
	return s
}

// Wrap word-wraps each line of text to at most width display columns, the
// first line of each indented by first spaces and its continuations by rest
// spaces; a word wider than a line is cut. width 0 means no limit (each line
// is only indented). It is the wrapping of the table report, for the other
// text the command prints on a terminal (help, errors, the --fix plan).
func Wrap(text string, width, first, rest int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			out = append(out, "")
			continue
		}
		out = append(out, wrapIndent(l, width, first, rest)...)
	}
	return out
}
