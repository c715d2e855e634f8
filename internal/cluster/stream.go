package cluster

import (
	"context"
	"errors"

	"github.com/Masterminds/semver/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// watchListFrom is the first Kubernetes minor whose API server serves
// streaming lists by default (the WatchList feature, beta and on in 1.32,
// off again in 1.33, on from 1.34:
// https://github.com/kubernetes/kubernetes/blob/v1.36.3/staging/src/k8s.io/apiserver/pkg/features/kube_features.go).
// A server whose gate is off refuses the request ("sendInitialEvents is
// forbidden for watch unless the WatchList feature gate is enabled"), and
// the list falls back to pages.
var watchListFrom = semver.MustParse("1.32.0")

// streamLists reports whether the big lists (nodes, Deployments, pods) may
// be read as one streaming list: real clients (not fakes) and a server of
// at least watchListFrom.
func (s *Snapshot) streamLists() bool {
	if s.clients.Config == nil {
		return false
	}
	v, err := s.ServerVersion()
	if err != nil {
		return false
	}
	sv, err := semver.NewVersion(v.GitVersion)
	if err != nil {
		return false
	}
	return !sv.LessThan(watchListFrom)
}

// eachStreamed calls fn for every item of a list, as each does, but reads
// the list, when the server can, as one streaming list (KEP-3157,
// https://kubernetes.io/docs/reference/using-api/api-concepts/#streaming-lists):
// a WATCH with sendInitialEvents=true that the API server answers from its
// watch cache, one object per event, ending with a bookmark annotated
// k8s.io/initial-events-end. One request instead of one per page of 500
// (30,000 pods: 60 requests in a chain, each a read from etcd), and still
// only one object in memory at a time. When the stream is refused or breaks
// (a server without the feature, a user allowed to list but not to watch,
// --request-timeout shorter than the stream: streamRefused), reset is called
// to drop what fn kept and the list is read in pages. Any other error (a
// 500, the run's deadline) and an error of fn end the list, as a LIST's
// would.
func (s *Snapshot) eachStreamed(resource, namespace string, opts metav1.ListOptions, stream streamFunc,
	list func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error),
	fn func(obj runtime.Object) error, reset func()) error {
	if s.streamLists() {
		n, err := stream(s.ctx, streamingOptions(opts), fn)
		var fe fnError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &fe):
			return &ListError{Verb: "list", Resource: resource, Namespace: namespace, Err: fe.err}
		case s.ctx.Err() != nil || !streamRefused(err):
			// The server failed (a 500, a timeout): a LIST would meet the
			// same; one request, one error, as for a LIST.
			return &ListError{Verb: "list", Resource: resource, Namespace: namespace, Err: err}
		}
		if n > 0 {
			reset()
		}
	}
	return each(s.ctx, resource, namespace, opts, list, fn)
}

// errStreamEnded is a stream that ended before its initial-events-end
// bookmark (the connection closed or timed out).
var errStreamEnded = errors.New("the streaming list ended before its last object")

// streamRefused reports whether err says the server will not stream this
// list to this user (the feature off, no watch permission, a resource that
// cannot be watched) or the stream broke: then the list is read in pages.
func streamRefused(err error) bool {
	return errors.Is(err, errStreamEnded) || errors.Is(err, errNotProtobuf) || apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) ||
		apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err) ||
		apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
}

// fnError is an error of the caller's fn, which ends a streamed list.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// streamFunc reads one streaming list with opts (streamingOptions), passing
// each object to fn, and returns the number of objects passed.
type streamFunc func(ctx context.Context, opts metav1.ListOptions, fn func(obj runtime.Object) error) (int, error)

// streamingOptions are opts as a streaming list: sendInitialEvents with
// bookmarks, the most recent state (resourceVersion "" and
// resourceVersionMatch NotOlderThan), no pages.
func streamingOptions(opts metav1.ListOptions) metav1.ListOptions {
	o := opts
	o.Watch = false
	o.SendInitialEvents = ptr.To(true)
	o.AllowWatchBookmarks = true
	o.ResourceVersion = ""
	o.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	o.Limit, o.Continue = 0, ""
	return o
}
