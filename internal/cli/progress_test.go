package cli

import (
	"bytes"
	"testing"
	"time"
)

func TestTerminalProgress(t *testing.T) {
	var b bytes.Buffer
	p := terminalProgress(&b, 200)
	p([]string{"release-deployed", "runtime-workloads"}, 41700*time.Millisecond)
	p(nil, 0)
	if got := b.String(); got != "\r\033[Kwaiting 42s more for: release-deployed, runtime-workloads\r\033[K" {
		t.Fatalf("progress output %q", got)
	}
}
