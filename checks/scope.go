package checks

import (
	"context"
	"fmt"
	"strings"
)

// scopedRun wraps a check that reads cluster-wide lists of resources: when
// the snapshot had to read the runtime namespace alone (cluster-wide LIST
// forbidden, --post; cluster.Snapshot.SetNamespaceFallback), the message says
// so, since what it found, or did not find, is about that namespace only.
func scopedRun(run func(context.Context, *Env) (Result, error), resources ...string) func(context.Context, *Env) (Result, error) {
	return func(ctx context.Context, env *Env) (Result, error) {
		r, err := run(ctx, env)
		if err != nil || env.Cluster == nil {
			return r, err
		}
		var narrowed []string
		ns := ""
		for _, res := range resources {
			if n, ok := env.Cluster.Scoped(res); ok {
				narrowed, ns = append(narrowed, res), n
			}
		}
		if len(narrowed) > 0 {
			r.Message += fmt.Sprintf(" (read namespace %s only: no permission to list %s in all namespaces)", ns, strings.Join(narrowed, ", "))
		}
		return r, nil
	}
}
