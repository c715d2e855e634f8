package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

var reqLine = regexp.MustCompile(`api-requests: total=(\d+) pages=(\d+)`)

// floorKinds are the kinds the checks read, as raw LIST paths (pods with
// the runtime-schedulable check's selector: those not Succeeded or Failed).
var floorKinds = []string{
	"/api/v1/pods?fieldSelector=" + url.QueryEscape(cluster.ActivePodsSelector),
	"/api/v1/nodes", "/api/v1/namespaces", "/api/v1/services",
	"/apis/apps/v1/deployments", "/apis/apps/v1/daemonsets", "/apis/apps/v1/statefulsets",
	"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "/apis/networking.k8s.io/v1/ingressclasses",
}

// floorReq is one LIST of a floor: the path with its selectors and the
// Accept header it is fetched with.
type floorReq struct {
	Path, Resource, Encoding, Accept string
}

const (
	// acceptProtobuf: built-in kinds in the apiserver's protobuf encoding
	// (https://kubernetes.io/docs/reference/using-api/api-concepts/, custom
	// resources have none).
	acceptProtobuf = "application/vnd.kubernetes.protobuf"
	// acceptMetadata asks for a PartialObjectMetadataList: names, labels,
	// annotations and owner references, no spec or data, as client-go's
	// metadata client does (https://pkg.go.dev/k8s.io/client-go/metadata).
	acceptMetadata = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)

// jsonFloor is the JSON floor: every kind the checks read, as JSON.
func jsonFloor() []floorReq {
	out := make([]floorReq, len(floorKinds))
	for i, p := range floorKinds {
		out[i] = floorReq{Path: p, Encoding: "json", Accept: "application/json"}
	}
	return out
}

// runFloor fetches every kind with curl at once, one unpaginated LIST each,
// written to /dev/null: the time the apiserver needs to serve the bytes,
// with nothing decoded. Wall time is from the first start to the last exit.
func (m *measurer) runFloor() (sample, error) { return m.curlAll(jsonFloor()) }

// runCheapFloor is the cheapest-encoding floor: the LISTs the run with the
// chart made, one unpaginated request each, built-in kinds as protobuf and
// Secrets, ConfigMaps, CRDs and custom resources metadata-only.
func (m *measurer) runCheapFloor() (sample, error) { return m.curlAll(m.cheap) }

// cheapRequests turns the LISTs of a run (audit log) into the cheapest
// floor's requests: custom resources are told by the CRDs the cluster
// serves (they have no protobuf encoding).
func (m *measurer) cheapRequests(lists []auditList) ([]floorReq, error) {
	ext, err := apiextensionsclient.NewForConfig(m.admin)
	if err != nil {
		return nil, err
	}
	crds, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	custom := map[string]bool{}
	for _, c := range crds.Items {
		custom[c.Spec.Names.Plural+"."+c.Spec.Group] = true
	}
	metadataOnly := map[string]bool{"secrets": true, "configmaps": true, "customresourcedefinitions.apiextensions.k8s.io": true}
	seen := map[string]bool{}
	var out []floorReq
	for _, l := range lists {
		if seen[l.key] {
			continue
		}
		seen[l.key] = true
		r := floorReq{Path: l.key, Resource: l.resource, Encoding: "protobuf", Accept: acceptProtobuf}
		if metadataOnly[l.resource] || custom[l.resource] {
			r.Encoding, r.Accept = "metadata-only", acceptMetadata
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// curlAll fetches reqs with curl at once, written to /dev/null.
func (m *measurer) curlAll(reqs []floorReq) (sample, error) {
	certs := filepath.Join(m.dir, "curl")
	if _, err := os.Stat(certs); err != nil {
		if err := os.MkdirAll(certs, 0o700); err != nil {
			return sample{}, err
		}
		for name, data := range map[string][]byte{"ca.crt": m.admin.CAData, "client.crt": m.admin.CertData, "client.key": m.admin.KeyData} {
			if err := os.WriteFile(filepath.Join(certs, name), data, 0o600); err != nil {
				return sample{}, err
			}
		}
	}
	var (
		mu    sync.Mutex
		total sample
	)
	g := errgroup.Group{}
	start := time.Now()
	for _, r := range reqs {
		g.Go(func() error {
			cmd := exec.Command("curl", "-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{size_download}",
				"-H", "Accept: "+r.Accept,
				"--cacert", filepath.Join(certs, "ca.crt"), "--cert", filepath.Join(certs, "client.crt"), "--key", filepath.Join(certs, "client.key"),
				strings.TrimSuffix(m.admin.Host, "/")+r.Path)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			s, err := timed(cmd)
			if err != nil || s.code != 0 {
				return fmt.Errorf("curl %s: %w %s", r.Path, err, out.String())
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
			mu.Lock()
			total.bytes += n
			total.rssKB = max(total.rssKB, s.rssKB)
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	total.wall = time.Since(start)
	total.requests = int64(len(reqs))
	return total, err
}

// runKubectl is what a user would do by hand: one kubectl get of every kind
// the checks read, as JSON.
func (m *measurer) runKubectl() (sample, error) {
	cmd := exec.Command("kubectl", "--kubeconfig", m.adminKubeconfig, "get", "nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods", "-A", "-o", "json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.dir}
	cw := &countWriter{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = cw, &stderr
	s, err := timed(cmd)
	if err == nil && s.code != 0 {
		err = fmt.Errorf("exit %d: %s", s.code, stderr.String())
	}
	s.bytes = cw.n
	if err != nil {
		return s, fmt.Errorf("kubectl: %w", err)
	}
	return s, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
