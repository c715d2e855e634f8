package cluster

import (
	"fmt"
	"strings"
	"testing"
)

func TestTailLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	got, err := tailLines(strings.NewReader(b.String()), 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 || got[0] != "line 71" || got[49] != "line 120" {
		t.Fatalf("tailLines = %d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	if got, _ := tailLines(strings.NewReader("only\n"), 50); len(got) != 1 || got[0] != "only" {
		t.Fatalf("short log: %q", got)
	}
}
