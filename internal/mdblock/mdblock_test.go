package mdblock

import (
	"strings"
	"testing"
)

func TestParseAndRewrite(t *testing.T) {
	text := strings.Join([]string{
		"# title",
		Marker("checks", "mode=pre category=cluster", "docs"),
		"old checks",
		EndMarker,
		"between",
		Marker("bench", "", "bench"),
		"old bench",
		"more old bench",
		EndMarker,
		"end",
	}, "\n")
	lines := Lines(text)
	blocks, err := Parse("README.md", lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{Kind: "checks", Args: "mode=pre category=cluster", Target: "docs", Begin: 1, End: 3},
		{Kind: "bench", Target: "bench", Begin: 5, End: 8},
	}
	if len(blocks) != len(want) {
		t.Fatalf("blocks = %+v, want %+v", blocks, want)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, blocks[i], want[i])
		}
	}
	got := strings.Join(Rewrite(lines, blocks, []string{"new checks", "new bench"}), "\n")
	wantText := strings.Join([]string{
		"# title", Marker("checks", "mode=pre category=cluster", "docs"), "new checks", EndMarker,
		"between", Marker("bench", "", "bench"), "new bench", EndMarker, "end",
	}, "\n")
	if got != wantText {
		t.Errorf("rewrite:\n%s\nwant:\n%s", got, wantText)
	}
}

func TestParseErrors(t *testing.T) {
	for name, c := range map[string]struct {
		text, want string
	}{
		"malformed":  {"<!-- BEGIN GENERATED checks mode=pre -->\n" + EndMarker, "README.md line 1: malformed marker"},
		"unclosed":   {Marker("flags", "rest", "docs") + "\nbody", "README.md line 1: no " + EndMarker},
		"nested":     {Marker("flags", "rest", "docs") + "\n" + Marker("bench", "", "bench") + "\n" + EndMarker, "README.md line 1: no " + EndMarker},
		"crlf dirty": {"<!-- BEGIN GENERATED bench (make bench) -->x\r\n" + EndMarker, "README.md line 1: malformed marker"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("README.md", Lines(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
