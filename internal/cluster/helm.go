package cluster

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	rspb "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// HelmReleaseSecretType is the Secret type of Helm 3's default storage driver.
const HelmReleaseSecretType = "helm.sh/release.v1"

// HelmRevision is one revision of a Helm release as its storage Secret's
// labels describe it (Secret sh.helm.release.v1.<name>.v<version>, labels
// owner=helm, name, status, version). Listing these is metadata-only: the
// release payload (chart, manifests, values) is only read by DecodeHelmRelease.
type HelmRevision struct {
	Namespace  string
	Name       string // release name
	Version    int    // revision
	Status     string // deployed, failed, pending-install, superseded, ...
	SecretName string
}

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// HelmRevisions lists every Helm release revision in the cluster once per
// snapshot (metadata-only list of Secrets labelled owner=helm, paginated),
// sorted by namespace, name and revision.
func (s *Snapshot) HelmRevisions() ([]HelmRevision, error) {
	return Memo(s, "helm/revisions", func() ([]HelmRevision, error) {
		var out []HelmRevision
		err := s.listAllOrFallback("secrets", func() { out = nil }, func(ns string) error {
			return s.eachMeta(secretsResource, ns, metav1.ListOptions{LabelSelector: "owner=helm"}, func(m *metav1.PartialObjectMetadata) {
				if name, v, ok := helmRecordLabels(m); ok { // else not a Helm 3 release record
					out = append(out, HelmRevision{Namespace: m.Namespace, Name: name, Version: v, Status: m.Labels["status"], SecretName: m.Name})
				}
			})
		})
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			return a.Version < b.Version
		})
		return out, err
	})
}

// helmRecordLabels reads a Helm 3 release record's labels (Secret or
// ConfigMap: name, version); ok is false for anything else labelled
// owner=helm.
func helmRecordLabels(m *metav1.PartialObjectMetadata) (name string, version int, ok bool) {
	v, err := strconv.Atoi(m.Labels["version"])
	if err != nil || m.Labels["name"] == "" {
		return "", 0, false
	}
	return m.Labels["name"], v, true
}

// LatestHelmRevisions returns the highest revision of each release.
func LatestHelmRevisions(revs []HelmRevision) []HelmRevision {
	latest := map[[2]string]HelmRevision{}
	var keys [][2]string
	for _, r := range revs {
		k := [2]string{r.Namespace, r.Name}
		cur, ok := latest[k]
		if !ok {
			keys = append(keys, k)
		}
		if !ok || r.Version > cur.Version {
			latest[k] = r
		}
	}
	out := make([]HelmRevision, len(keys))
	for i, k := range keys {
		out[i] = latest[k]
	}
	return out
}

// HelmRelease reads and decodes one release revision's Secret (one GET),
// memoised per snapshot.
func (s *Snapshot) HelmRelease(rev HelmRevision) (*rspb.Release, error) {
	r, err := s.helmRecord(rev)
	if err != nil {
		return nil, err
	}
	return r.Release, nil
}

// HelmApplyMethod returns how the revision's objects were applied, as Helm
// 4 records it ("ssa": server-side apply; "csa" or "": client-side, as Helm
// 3 always does); Helm 4's `helm upgrade` keeps that method by default
// (pkg/action/upgrade.go getUpgradeServerSideValue, --server-side=auto).
func (s *Snapshot) HelmApplyMethod(rev HelmRevision) (string, error) {
	r, err := s.helmRecord(rev)
	if err != nil {
		return "", err
	}
	return r.ApplyMethod, nil
}

type helmRecord struct {
	Release     *rspb.Release
	ApplyMethod string
}

func (s *Snapshot) helmRecord(rev HelmRevision) (helmRecord, error) {
	return Memo(s, "helm/release/"+rev.Namespace+"/"+rev.SecretName, func() (helmRecord, error) {
		sec, err := s.clients.Kube.CoreV1().Secrets(rev.Namespace).Get(s.ctx, rev.SecretName, metav1.GetOptions{})
		if err != nil {
			return helmRecord{}, &ListError{Verb: "get", Resource: "secrets", Namespace: rev.Namespace, Err: err}
		}
		rls, method, err := decodeHelmRecord(sec)
		return helmRecord{Release: rls, ApplyMethod: method}, err
	})
}

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// MaxReleaseSize caps a release payload once decompressed: 10 MiB, ten times
// the 1 MiB a Secret may hold (Helm's own limit on a release,
// https://github.com/helm/helm/blob/main/pkg/storage/driver/secrets.go, and
// the API server's on a Secret). A real release compresses 3-10×; a payload
// beyond this is a decompression bomb (1 MB of gzip can expand to 1 GB) and is
// reported unreadable, not decoded.
const MaxReleaseSize = 10 << 20

// UnreadableReleaseError is a release Secret whose payload is not decoded:
// over MaxReleaseSize once decompressed.
type UnreadableReleaseError struct {
	Namespace, Name string
	Reason          string
}

func (e *UnreadableReleaseError) Error() string {
	return fmt.Sprintf("release %s/%s is unreadable: %s", e.Namespace, e.Name, e.Reason)
}

// DecodeHelmRelease decodes a Helm 3 release Secret: data["release"] is
// base64 of (usually gzip'd) JSON of helm.sh/helm/v3/pkg/release.Release, as
// Helm's storage driver writes it (pkg/storage/driver/util.go encodeRelease;
// uncompressed payloads from old Helm versions are accepted too).
//
// The decompressed size is bounded: the gzip trailer's ISIZE (the size mod
// 2^32, RFC 1952 §2.3.1) is checked first, which costs nothing, then the
// stream is read through a limit, since a hostile trailer can lie. Either
// way a payload over MaxReleaseSize is an *UnreadableReleaseError.
func DecodeHelmRelease(sec *corev1.Secret) (*rspb.Release, error) {
	rls, _, err := decodeHelmRecord(sec)
	return rls, err
}

// decodeHelmRecord is DecodeHelmRelease, with the apply method Helm 4
// records beside the release ("apply_method").
func decodeHelmRecord(sec *corev1.Secret) (*rspb.Release, string, error) {
	data, ok := sec.Data["release"]
	if !ok {
		return nil, "", fmt.Errorf("secret %s/%s has no release data", sec.Namespace, sec.Name)
	}
	b, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, "", fmt.Errorf("decoding release %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	if b, err = decompressRelease(b); err != nil {
		var ue *UnreadableReleaseError
		if errors.As(err, &ue) {
			ue.Namespace, ue.Name = sec.Namespace, sec.Name
			return nil, "", ue
		}
		return nil, "", fmt.Errorf("decompressing release %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	var rls struct {
		rspb.Release
		ApplyMethod string `json:"apply_method"`
	}
	if err := json.Unmarshal(b, &rls); err != nil {
		return nil, "", fmt.Errorf("parsing release %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return &rls.Release, rls.ApplyMethod, nil
}

// decompressRelease gunzips b when it is gzip'd, within MaxReleaseSize.
func decompressRelease(b []byte) ([]byte, error) {
	if len(b) <= 3 || !bytes.Equal(b[:3], gzipMagic) {
		if len(b) > MaxReleaseSize {
			return nil, &UnreadableReleaseError{Reason: fmt.Sprintf("payload larger than %d MiB", MaxReleaseSize>>20)}
		}
		return b, nil
	}
	tooLarge := &UnreadableReleaseError{Reason: fmt.Sprintf("payload larger than %d MiB once decompressed", MaxReleaseSize>>20)}
	if len(b) >= 18 && binary.LittleEndian.Uint32(b[len(b)-4:]) > MaxReleaseSize {
		return nil, tooLarge
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, MaxReleaseSize+1))
	if err != nil {
		return nil, err
	}
	if len(out) > MaxReleaseSize {
		return nil, tooLarge
	}
	return out, nil
}
