package e2e

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// airgapMirror is the registry the air-gapped nodes of the test cluster
// pull from: kwok leaves a pod on a node named airgap-* in ImagePullBackOff
// for every image elsewhere (internal/testcluster/testdata/kwok-stages.yaml).
const airgapMirror = "registry.airgap.example"

// TestAirGappedAndProxiedClusters runs the image and egress checks on one
// full test cluster whose nodes pull only from airgapMirror, against the
// real chart 0.30.0, real Helm, an in-process OCI registry, a forward
// proxy and live NetworkPolicies and DNS Services; each step says what
// decides it.
func TestAirGappedAndProxiedClusters(t *testing.T) {
	tc.Parallel(t, tc.Long)
	start := time.Now()
	c := tc.Start(t)
	for _, n := range []string{"airgap-1", "airgap-2"} {
		c.AddNode(t, tc.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"})
	}
	t.Run("mirror", func(t *testing.T) { airgapMirrorSteps(t, c) })
	t.Run("registry", func(t *testing.T) { registrySteps(t, c) })
	t.Run("egress", func(t *testing.T) { egressSteps(t, c) })
	t.Run("dns", func(t *testing.T) { dnsSteps(t, c) })
	t.Run("policies", func(t *testing.T) { policySteps(t, c) })
	t.Logf("%s in all", time.Since(start).Round(time.Second))
}

// mirrorValues are the values of an air-gapped install that trusts
// global.imageRegistry alone.
const mirrorValues = renderingValues + `  imageRegistry: ` + airgapMirror + `
`

// planEntry matches one image image-plan names: "REF (Kind/name[ (hook)]
// CONTAINER FIELD: how)".
var planEntry = regexp.MustCompile(`([^\s;:]+:[^\s;]+) \((\w+/[a-z0-9.-]+)( \(hook\))? [^:]+: ([^)]*)\)`)

// airgapMirrorSteps: image-plan with global.imageRegistry as the intent,
// judged against what Helm renders and what the air-gapped nodes pull.
//  1. image-plan fails naming every image elsewhere; Helm renders exactly
//     those elsewhere (Helm decides which values reach which image; read
//     from the release record of the install of step 2).
//  2. `helm install` with these values fails: its pre-install hook's image
//     is one of them and kwok's air-gapped node cannot pull it.
//  3. Installed without hooks, the runtime's pods wait in ImagePullBackOff
//     and --post names the same images the pre-install check named.
//  4. With exactly the --set flags the plugin printed, image-plan passes
//     (replayed from a bundle), `helm install` (hooks included) rolls every
//     pod out on the air-gapped nodes, and what it rendered (its release
//     record) has every image at the mirror, each where the mirror list says.
func airgapMirrorSteps(t *testing.T, c *tc.Cluster) {
	values := chartValues(t, mirrorValues)
	last := time.Now()
	step := func(what string) {
		t.Logf("%s: %s", what, time.Since(last).Round(100*time.Millisecond))
		last = time.Now()
	}
	only := []string{"--only", "image-plan", "--chart", fixtureChart(t), "-f", values, "--release-name", runtimeRelease, "-n", runtimeNS}

	// 1.
	res, doc := c.RunJSON(t, nil, only...)
	wantCode(t, res, 1)
	plan := wantStatus(t, doc, "image-plan", "fail", "(global.imageRegistry)",
		"quay.io/codefresh/gitops-runtime-installer:0.30.0 (Job/validate-values (hook)",
		"--set installer.image.repository="+airgapMirror+"/codefresh/gitops-runtime-installer",
		"source_image,target_image")
	if plan.Impact != "install-fails" {
		t.Errorf("image-plan impact %q: a hook's image elsewhere makes helm install fail", plan.Impact)
	}
	named := map[string][]string{} // workload -> images named elsewhere
	hooks := map[string]bool{}
	for _, m := range planEntry.FindAllStringSubmatch(plan.Message, -1) {
		named[m[2]] = appendUnique(named[m[2]], m[1])
		hooks[m[2]] = m[3] != ""
	}
	step("image-plan fails")
	// 2.
	out, code := helmCmd(t, c, tc.HelmBinary(t), "install", runtimeRelease, fixtureChart(t), "-n", runtimeNS, "--create-namespace", "-f", values, "--timeout", "10s")
	if code == 0 || !strings.Contains(out, "pre-install") {
		t.Fatalf("helm install with an installer image off the mirror: exit %d, want a failed pre-install hook\n%s", code, out)
	}
	// 1, against what Helm rendered for that install (its release record
	// keeps the manifest and the hooks, failed or not).
	pods, cms := renderedManifest(t, releaseRendered(t, c, runtimeRelease, runtimeNS))
	pulled, argsEnv := podImages(pods, cms)
	elsewhere := offMirror(pulled, argsEnv)
	sameImages(t, "images image-plan names elsewhere", named, "helm renders elsewhere", elsewhere)
	hookImages := waitingImages(t, c, func(p corev1.Pod) bool { return p.Labels["job-name"] != "" })
	for _, img := range hookImages {
		found := false
		for w, imgs := range named {
			found = found || (hooks[w] && contains(imgs, img))
		}
		if !found {
			t.Errorf("hook pod waits on %s, which image-plan does not name for a hook", img)
		}
	}
	if len(hookImages) == 0 {
		t.Errorf("no hook pod waits in ImagePullBackOff after helm install failed:\n%s", out)
	}

	step("helm install fails on the hook")
	// 3.
	if out, code := helmCmd(t, c, tc.HelmBinary(t), "install", runtimeRelease, fixtureChart(t), "-n", runtimeNS, "-f", values, "--replace", "--no-hooks"); code != 0 {
		t.Fatalf("helm install --no-hooks: exit %d\n%s", code, out)
	}
	workloads := 0
	for w := range named {
		if strings.HasPrefix(w, "Deployment/") || strings.HasPrefix(w, "StatefulSet/") {
			workloads++
		}
	}
	waitFor(t, 60*time.Second, "the runtime's pods to wait on their images", func() bool {
		return len(waitingImages(t, c, func(p corev1.Pod) bool { return p.Labels["job-name"] == "" })) > 0 && pendingWithoutStatus(t, c) == 0
	})
	res, doc = post(t, c, "--only", "runtime-workloads")
	wantCode(t, res, 1)
	rw := wantStatus(t, doc, "runtime-workloads", "fail", "ImagePullBackOff")
	postNamed := map[string]bool{}
	for _, m := range regexp.MustCompile(`Back-off pulling image \\?"([^"\\]+)\\?"`).FindAllStringSubmatch(rw.Message, -1) {
		postNamed[m[1]] = true
	}
	want := map[string]bool{}
	for w, imgs := range named {
		if hooks[w] || !(strings.HasPrefix(w, "Deployment/") || strings.HasPrefix(w, "StatefulSet/")) {
			continue
		}
		for _, img := range imgs {
			if contains(pulled[w], img) {
				want[img] = true
			}
		}
	}
	if strings.Join(sortedSet(postNamed), " ") != strings.Join(sortedSet(want), " ") {
		t.Errorf("--post names the images\n%v\nimage-plan named for the runtime's pods\n%v\n--post:\n%s", sortedSet(postNamed), sortedSet(want), rw.Message)
	}

	step("--no-hooks install; --post")
	// 4.
	sets := hintFlags(t, plan.Hint)
	_, csv, ok := strings.Cut(plan.Hint, "source_image,target_image\n")
	if !ok {
		t.Fatalf("no mirror list in the hint %q", plan.Hint)
	}
	targets := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(csv), "\n") {
		_, dst, ok := strings.Cut(line, ",")
		if !ok || !strings.HasPrefix(dst, airgapMirror+"/") {
			t.Fatalf("mirror list line %q", line)
		}
		targets[dst] = true
	}
	res, doc = c.RunJSONReplayed(t, nil, append(only, sets...)...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "image-plan", "pass", "images are at "+airgapMirror)
	step("image-plan passes with the printed values, replayed")
	// A StatefulSet whose pod never became Ready is not rolled by an
	// upgrade (its controller waits on that pod): start again, as a user
	// whose install failed would.
	// Helm's own --wait is left out: it waits for every object of the
	// release and says nothing of the one it waits for when its time runs
	// out; what the next install needs gone are the pods.
	if out, code := helmCmd(t, c, tc.HelmBinary(t), "uninstall", runtimeRelease, "-n", runtimeNS, "--no-hooks"); code != 0 {
		t.Fatalf("helm uninstall: exit %d\n%s", code, out)
	}
	waitNoWorkloadPods(t, c, runtimeNS, 3*time.Minute)
	step("helm uninstall")
	if out, code := helmCmd(t, c, tc.HelmBinary(t), append([]string{"install", runtimeRelease, fixtureChart(t), "-n", runtimeNS, "-f", values, "--wait", "--timeout", "2m"}, sets...)...); code != 0 {
		t.Fatalf("helm install with the printed values: exit %d\n%s", code, out)
	}
	step("helm install with the printed values")
	// What Helm rendered with them (the release record: manifest and hooks).
	pods, cms = renderedManifest(t, releaseRendered(t, c, runtimeRelease, runtimeNS))
	pulled, argsEnv = podImages(pods, cms)
	rendered := map[string]bool{}
	for _, m := range []map[string][]string{pulled, argsEnv} {
		for w, imgs := range m {
			for _, img := range imgs {
				rendered[img] = true
				if !targets[img] {
					t.Errorf("with the printed values Helm renders %s in %s: not a target of the mirror list", img, w)
				}
			}
		}
	}
	if len(rendered) < 15 {
		t.Errorf("helm renders only %d images: %v", len(rendered), sortedSet(rendered))
	}
	res, doc = post(t, c, "--only", "runtime-workloads")
	if ch := tc.Check(t, doc, "runtime-workloads"); ch.Status == "fail" || strings.Contains(ch.Message, "ImagePullBackOff") {
		t.Errorf("after helm upgrade with the printed values: runtime-workloads %s (exit %d): %s", ch.Status, res.Code, ch.Message)
	}
}

// waitingImages returns the images the runtime namespace's pods selected
// by keep wait on in ImagePullBackOff, sorted.
func waitingImages(t *testing.T, c *tc.Cluster, keep func(corev1.Pod) bool) []string {
	t.Helper()
	list, err := c.Kube.CoreV1().Pods(runtimeNS).List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, p := range list.Items {
		if !keep(p) {
			continue
		}
		for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if s.State.Waiting != nil && s.State.Waiting.Reason == "ImagePullBackOff" {
				set[s.Image] = true
			}
		}
	}
	return sortedSet(set)
}

// pendingWithoutStatus counts the runtime namespace's pods kwok has not
// reported on yet.
func pendingWithoutStatus(t *testing.T, c *tc.Cluster) int {
	t.Helper()
	list, err := c.Kube.CoreV1().Pods(runtimeNS).List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list.Items {
		if len(p.Status.ContainerStatuses) == 0 {
			n++
		}
	}
	return n
}

// sameImages fails the test when two maps of images by workload differ.
func sameImages(t *testing.T, what string, a map[string][]string, whatB string, b map[string][]string) {
	t.Helper()
	flat := func(m map[string][]string) []string {
		var out []string
		for w, imgs := range m {
			for _, i := range imgs {
				out = append(out, w+" "+i)
			}
		}
		sort.Strings(out)
		return out
	}
	if fa, fb := flat(a), flat(b); strings.Join(fa, "\n") != strings.Join(fb, "\n") {
		t.Errorf("%s:\n  %s\n%s:\n  %s", what, strings.Join(fa, "\n  "), whatB, strings.Join(fb, "\n  "))
	}
}

func appendUnique(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// registrySteps: image-registry and image-pull-secrets with
// --registry-check against an in-process OCI registry serving the public
// registries' names (through --connect-to and --ca-file), holding a stub
// of every image `helm template` renders for chart 0.30.0's defaults, for
// linux/amd64 and linux/arm64 (the nodes are amd64):
//  1. the installer image missing and gitops-operator's arm64 only:
//     image-registry fails naming both with the registry's answer and the
//     platforms (install-fails: the installer is a hook's);
//  2. both pushed, ghcr.io asking for credentials: image-pull-secrets fails
//     naming the pod that pulls from it (Argo CD's dex) and image-registry
//     the registry's refusal;
//  3. a pull secret for ghcr.io in the namespace, given to dex by its chart
//     value: both pass.
//
// Runs 1 and 3 are replayed from their bundles: the registries' answers are
// recorded, and the replay (which dials nothing) reports the same.
func registrySteps(t *testing.T, c *tc.Cluster) {
	const ns = "registry-check"
	c.CreateNamespace(t, ns)
	values := chartValues(t, renderingValues)
	pods, cms := renderedManifest(t, helmTemplate(t, ns, values))
	pulled, named := podImages(pods, cms)
	images := map[string]bool{}
	for _, m := range []map[string][]string{pulled, named} {
		for _, imgs := range m {
			for _, img := range imgs {
				images[img] = true
			}
		}
	}
	hosts := map[string]bool{}
	for img := range images {
		hosts[registryOf(t, img)] = true
	}
	reg := startRegistry(t, newCA(t), sortedSet(hosts)...)
	const installer = "quay.io/codefresh/gitops-runtime-installer:0.30.0"
	operator := ""
	for _, img := range pulled["Deployment/gitops-operator"] {
		if strings.Contains(img, "gitops-operator") {
			operator = img
		}
	}
	if !images[installer] || operator == "" {
		t.Fatalf("the chart renders no %s or no gitops-operator image: %v", installer, sortedSet(images))
	}
	for img := range images {
		switch img {
		case installer:
		case operator:
			reg.push(t, img, "linux/arm64")
		default:
			reg.push(t, img, "linux/amd64", "linux/arm64")
		}
	}
	args := append([]string{"--only", "image-registry,image-pull-secrets", "--registry-check", "--chart", fixtureChart(t), "-f", values, "--release-name", runtimeRelease, "-n", ns}, reg.ConnectTo()...)

	// 1.
	res, doc := c.RunJSONReplayed(t, nil, args...)
	wantCode(t, res, 1)
	ir := wantStatus(t, doc, "image-registry", "fail", installer+": not found",
		operator+": platforms linux/arm64, none for the linux/amd64 nodes the pod can land on")
	if ir.Impact != "install-fails" {
		t.Errorf("image-registry impact %q: the installer image is a hook's", ir.Impact)
	}
	wantStatus(t, doc, "image-pull-secrets", "pass", "every registry allows anonymous pulls")

	// 2.
	reg.push(t, installer, "linux/amd64")
	reg.push(t, operator, "linux/amd64", "linux/arm64")
	reg.requireAuth("ghcr.io", "e2e", "pull-pass")
	res, doc = c.RunJSON(t, nil, args...)
	wantCode(t, res, 1)
	wantStatus(t, doc, "image-pull-secrets", "fail", "Deployment/argo-cd-dex-server pulls from ghcr.io with no pull secret for it", "ghcr.io (it refuses anonymous pulls)")
	ir = wantStatus(t, doc, "image-registry", "fail", "ghcr.io/dexidp/dex:", "unauthorized (HTTP 401)")
	if strings.Contains(ir.Message, installer) || strings.Contains(ir.Message, operator) {
		t.Errorf("image-registry still names the images pushed since: %s", ir.Message)
	}

	// 3.
	if _, err := c.Kube.CoreV1().Secrets(ns).Create(bg, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ghcr-creds"}, Type: corev1.SecretTypeDockerConfigJson,
		StringData: map[string]string{corev1.DockerConfigJsonKey: dockerConfigJSON("ghcr.io", "e2e", "pull-pass")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, doc = c.RunJSONReplayed(t, nil, append(args, "--set", "argo-cd.dex.imagePullSecrets[0].name=ghcr-creds")...)
	wantCode(t, res, 0)
	wantStatus(t, doc, "image-pull-secrets", "pass", "ghcr.io")
	wantStatus(t, doc, "image-registry", "pass", "images resolve at their registries")
	if strings.Contains(res.Stdout, "pull-pass") || strings.Contains(res.Stdout, "ZTJlOnB1bGwtcGFzcw") {
		t.Errorf("the report prints the pull secret's credentials:\n%s", res.Stdout)
	}
}

// registryOf is the registry host go-containerregistry dials for img
// (Docker Hub's is index.docker.io).
func registryOf(t *testing.T, img string) string {
	t.Helper()
	r, err := name.ParseReference(img)
	if err != nil {
		t.Fatal(err)
	}
	return r.Context().RegistryStr()
}

// waitNoWorkloadPods waits until namespace ns holds no pod of a
// workload (the garbage collector and kwok delete them after an
// uninstall), failing with what remains. The pods of hook Jobs are left
// out: hooks are not part of the release, and the next install's hooks
// replace their Jobs (before-hook-creation).
func waitNoWorkloadPods(t *testing.T, c *tc.Cluster, ns string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		list, err := c.Kube.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, p := range list.Items {
			if len(p.OwnerReferences) == 1 && p.OwnerReferences[0].Kind == "Job" {
				continue
			}
			left = append(left, fmt.Sprintf("%s (phase %s, node %s, deletionTimestamp %v, finalizers %v)",
				p.Name, p.Status.Phase, p.Spec.NodeName, p.DeletionTimestamp, p.Finalizers))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods left in %s %s after the uninstall: %s", len(left), ns, timeout, strings.Join(left, "; "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// offMirror returns, by workload, the images of pulled and argsEnv (as
// podImages returns them) that are not under airgapMirror.
func offMirror(pulled, argsEnv map[string][]string) map[string][]string {
	elsewhere := map[string][]string{}
	for _, m := range []map[string][]string{pulled, argsEnv} {
		for w, imgs := range m {
			for _, img := range imgs {
				if !strings.HasPrefix(img, airgapMirror+"/") {
					elsewhere[w] = appendUnique(elsewhere[w], img)
				}
			}
		}
	}
	return elsewhere
}

// TestImagePlanOnEveryChartLineAgreesWithHelm runs image-plan with
// global.imageRegistry as the intent against the chart lines 0.26.x and
// 0.27.x of the fixtures (0.30.0 is TestAirGappedAndProxiedClusters'):
// the images it names elsewhere are those `helm template` of the line
// renders elsewhere, each with the values that move it, and with exactly
// the --set flags it prints `helm template` renders every image at the
// mirror.
func TestImagePlanOnEveryChartLineAgreesWithHelm(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	values := chartValues(t, mirrorValues)
	for _, line := range []string{"chart-0.26", "chart-0.27"} {
		t.Run(line, func(t *testing.T) {
			dir := chartLine(t, line)
			res, doc := c.RunJSON(t, nil, "--only", "image-plan", "--chart", dir, "-f", values, "--release-name", runtimeRelease, "-n", runtimeNS)
			wantCode(t, res, 1)
			plan := wantStatus(t, doc, "image-plan", "fail", "(global.imageRegistry)", "--set installer.image.repository="+airgapMirror+"/")
			if strings.Contains(plan.Message, "no value") || strings.Contains(plan.Message, "could not trace") || strings.Contains(plan.Hint, "has no value") {
				t.Errorf("%s: an image without a value:\n%s\n%s", line, plan.Message, plan.Hint)
			}
			named := map[string][]string{}
			for _, m := range planEntry.FindAllStringSubmatch(plan.Message, -1) {
				named[m[2]] = appendUnique(named[m[2]], m[1])
				if !strings.HasPrefix(m[4], "set ") {
					t.Errorf("%s: %s in %s: %s", line, m[1], m[2], m[4])
				}
			}
			pods, cms := renderedManifest(t, helmTemplateOf(t, dir, runtimeNS, values))
			elsewhere := offMirror(podImages(pods, cms))
			if len(elsewhere) == 0 {
				t.Fatalf("%s: helm template renders every image at the mirror", line)
			}
			sameImages(t, "images image-plan names elsewhere", named, "helm template renders elsewhere", elsewhere)
			pods, cms = renderedManifest(t, helmTemplateOf(t, dir, runtimeNS, values, hintFlags(t, plan.Hint)...))
			pulled, argsEnv := podImages(pods, cms)
			n := 0
			for _, m := range []map[string][]string{pulled, argsEnv} {
				for w, imgs := range m {
					for _, img := range imgs {
						n++
						if !strings.HasPrefix(img, airgapMirror+"/") {
							t.Errorf("%s: with the printed values Helm renders %s in %s", line, img, w)
						}
					}
				}
			}
			if n < 15 {
				t.Errorf("%s: helm template renders only %d images", line, n)
			}
		})
	}
}
