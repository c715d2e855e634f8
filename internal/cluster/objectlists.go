package cluster

import (
	"context"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectList names one of the snapshot's shared lists (Objects): the
// objects of one resource in one namespace ("" for cluster-wide or
// cluster-scoped).
type ObjectList struct {
	Resource  schema.GroupVersionResource
	Namespace string
}

// ReadObjectLists reads each of lists into the snapshot (Objects: metadata,
// by "namespace/name", memoized) at once, at most 8 at a time, instead of
// one after another (each list is a round trip); the callers then read
// them, and their errors, through Objects. A list not started when ctx is
// done is left for Objects to read.
func (s *Snapshot) ReadObjectLists(ctx context.Context, lists []ObjectList) {
	var g errgroup.Group
	g.SetLimit(8)
	for _, l := range lists {
		g.Go(func() error {
			if ctx.Err() == nil {
				_, _ = s.Objects(l.Resource, l.Namespace)
			}
			return nil
		})
	}
	_ = g.Wait()
}
