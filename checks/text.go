package checks

// Helpers of the checks' messages: a list cut to its first items, a count
// with its noun, a first line, a name or what stands for none.

import (
	"fmt"
	"strings"
)

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// orNamespace returns ns when a manifest leaves the namespace empty.
func orNamespace(got, ns string) string {
	if got == "" {
		return ns
	}
	return got
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// plural returns "1 change" or "3 changes".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// first returns at most n items of l, with "… and N more" after them.
func first(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(append([]string{}, l[:n]...), fmt.Sprintf("… and %d more", len(l)-n))
}
