// Command profile runs kubectl gitops-preflight in-process with the CPU and
// heap profilers on, for `go tool pprof`. Use it on a cluster kept by
// `go run ./hack/bench -keep`:
//
//	go run ./hack/profile -cpu cpu.out -heap heap.out -- --kubeconfig K -o json
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
)

func main() {
	cpu := flag.String("cpu", "cpu.out", "CPU profile file")
	heap := flag.String("heap", "heap.out", "heap profile file (in-use and allocations, taken at the end of the run)")
	flag.Parse()
	f, err := os.Create(*cpu)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	cmd := cli.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: io.Discard, ErrOut: os.Stderr}, cli.Host{Getenv: os.Getenv})
	cmd.SetArgs(flag.Args())
	err = cmd.ExecuteContext(context.Background())
	pprof.StopCPUProfile()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "run: %s, exit %d; heap: %d MiB allocated in total, %d MiB sys\n",
		time.Since(start).Round(time.Millisecond), cli.ExitCode(err), ms.TotalAlloc>>20, ms.Sys>>20)
	h, herr := os.Create(*heap)
	if herr == nil {
		_ = pprof.Lookup("allocs").WriteTo(h, 0)
		h.Close()
	}
}
