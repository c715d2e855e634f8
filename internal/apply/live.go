package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v3/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
)

// live answers the GETs Helm's kube client makes of the objects it
// updates (before it patches one, again to compute the three-way merge,
// and once more to refresh it when there is nothing to patch) from what
// was read once: a LIST of every kind and namespace that holds two or more
// of the objects (one request for many), and the first answer to any other
// GET. Writes go to the API server, as dry runs. Helm's own code still
// decides every request: only the repeated reads are not sent again.
type live struct {
	// base is the path of the API server's URL ("" or a proxy's prefix,
	// say /k8s/clusters/c-1), cut from request paths.
	base string

	mu sync.Mutex
	// objects are the answers by API path (JSON), listed groups are the
	// paths of the collections listed: a name missing there is a 404.
	objects map[string][]byte
	listed  map[string]bool
	// gets are the first answers of the GETs that went through.
	gets map[string]*cachedAnswer
}

type cachedAnswer struct {
	once   sync.Once
	status int
	header http.Header
	body   []byte
	err    error
}

func newLive(cfg *rest.Config) *live {
	l := &live{objects: map[string][]byte{}, listed: map[string]bool{}, gets: map[string]*cachedAnswer{}}
	if u, err := url.Parse(cfg.Host); err == nil {
		l.base = strings.TrimSuffix(u.Path, "/")
	}
	return l
}

// wrap is the transport middleware (outermost: rest.Config.Wrap after the
// engine's).
func (l *live) wrap(rt http.RoundTripper) http.RoundTripper { return liveTransport{next: rt, l: l} }

type liveTransport struct {
	next http.RoundTripper
	l    *live
}

func (t liveTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || r.URL.RawQuery != "" && !strings.HasPrefix(r.URL.RawQuery, "timeout=") {
		return t.next.RoundTrip(r)
	}
	path := strings.TrimPrefix(r.URL.Path, t.l.base)
	t.l.mu.Lock()
	obj, ok := t.l.objects[path]
	collection := path[:max(strings.LastIndex(path, "/"), 0)]
	listed := t.l.listed[collection]
	a := t.l.gets[path]
	if a == nil && !ok && !listed {
		a = &cachedAnswer{}
		t.l.gets[path] = a
	}
	t.l.mu.Unlock()
	switch {
	case ok:
		return answer(r, http.StatusOK, nil, obj), nil
	case listed:
		name := path[len(collection)+1:]
		resourceName := collection[strings.LastIndex(collection, "/")+1:]
		st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
			Message: fmt.Sprintf("%s %q not found", resourceName, name), Details: &metav1.StatusDetails{Name: name, Kind: resourceName}}
		b, _ := json.Marshal(st)
		return answer(r, http.StatusNotFound, nil, b), nil
	}
	a.once.Do(func() {
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			a.err = err
			return
		}
		defer resp.Body.Close()
		a.status, a.header = resp.StatusCode, resp.Header.Clone()
		a.body, a.err = io.ReadAll(resp.Body)
	})
	if a.err != nil {
		return nil, a.err
	}
	return answer(r, a.status, a.header, a.body), nil
}

// WrappedRoundTripper lets client-go's utilities see through the wrapper.
func (t liveTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func answer(r *http.Request, status int, h http.Header, body []byte) *http.Response {
	if h == nil {
		h = http.Header{"Content-Type": []string{"application/json"}}
	} else {
		h = h.Clone()
	}
	return &http.Response{Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}
}

// collectionPath is the API path of a kind's objects in namespace ns ("" for
// cluster-scoped).
func collectionPath(gvr schema.GroupVersionResource, ns string) string {
	p := "/api/" + gvr.Version
	if gvr.Group != "" {
		p = "/apis/" + gvr.Group + "/" + gvr.Version
	}
	if ns != "" {
		p += "/namespaces/" + ns
	}
	return p + "/" + gvr.Resource
}

// Lister lists every object of a kind in a namespace ("" for cluster-wide)
// whole, by namespace/name, as JSON: the run's own shared list
// (cluster.Snapshot.ObjectsJSON), so that no kind is listed twice in a run.
// It refuses the kinds it does not list whole (Secrets, CRDs): those are
// read one object at a time.
type Lister func(gvr schema.GroupVersionResource, namespace string) (map[string][]byte, error)

// Cluster is what the run has already read that a dry run reuses (the
// run's snapshot): its shared lists (ObjectsJSON, a Lister) and its
// discovery document (APIGroupsAndResources: the groups and the resources
// of each group/version, as discovery's ServerGroupsAndResources returns
// them), from which Helm's kube client maps the manifests' kinds to
// resources instead of reading discovery again.
type Cluster interface {
	ObjectsJSON(gvr schema.GroupVersionResource, namespace string) (map[string][]byte, error)
	APIGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error)
}

// prefetch lists, through list (concurrently, at most readLimit at once),
// every kind and namespace that holds two or more of the objects of target
// and others, and keeps the objects; then it reads, the same way, each
// object of target that no list holds (the kinds list refuses: Secrets,
// CRDs; a kind with one object), with the GET Helm's kube client sends for
// it (resource.Helper), so that Helm finds the answer kept instead of
// sending it from inside a dry run's slot.
func (l *live) prefetch(ctx context.Context, list Lister, target kube.ResourceList, others ...kube.ResourceList) error {
	infos := append([]kube.ResourceList{target}, others...)
	type group struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	count := map[group]int{}
	var groups []group
	for _, li := range infos {
		for _, info := range li {
			ns := ""
			if info.Namespaced() {
				ns = info.Namespace
			}
			g := group{info.Mapping.Resource, ns}
			if count[g]++; count[g] == 2 {
				groups = append(groups, g)
			}
		}
	}
	if list == nil {
		groups = nil
	}
	// A kind that cannot be listed is read one object at a time. The reads
	// do not wait for the dry runs' slots (the admission checks' dry runs
	// may hold them all), only for one another's.
	var reads errgroup.Group
	reads.SetLimit(readLimit)
	for _, g := range groups {
		reads.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			objs, err := list(g.gvr, g.ns)
			if err != nil {
				return nil
			}
			coll := collectionPath(g.gvr, g.ns)
			l.mu.Lock()
			for k, v := range objs {
				_, name, _ := strings.Cut(k, "/")
				l.objects[coll+"/"+name] = v
			}
			l.listed[coll] = true
			l.mu.Unlock()
			return nil
		})
	}
	_ = reads.Wait()
	for _, info := range target {
		ns := ""
		if info.Namespaced() {
			ns = info.Namespace
		}
		coll := collectionPath(info.Mapping.Resource, ns)
		l.mu.Lock()
		_, kept := l.objects[coll+"/"+info.Name]
		listed := l.listed[coll]
		l.mu.Unlock()
		if kept || listed {
			continue
		}
		reads.Go(func() error {
			if ctx.Err() == nil {
				_, _ = resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
			}
			return nil
		})
	}
	_ = reads.Wait()
	return ctx.Err()
}

// readLimit bounds the reads prefetch sends at once.
const readLimit = 8
