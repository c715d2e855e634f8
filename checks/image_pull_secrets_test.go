package checks

import (
	"encoding/base64"
	"strings"
	"testing"
)

// quayPullSecret is the Secret quay-pull in namespace codefresh: a
// kubernetes.io/dockerconfigjson with credentials for quay.io.
var quayPullSecret = `apiVersion: v1
kind: Secret
metadata: {name: quay-pull, namespace: codefresh}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: ` + base64.StdEncoding.EncodeToString([]byte(`{"auths":{"https://quay.io":{"auth":"dTpw"}}}`)) + `}`

func TestImagePullSecrets(t *testing.T) {
	c := imageChart(t)
	secret := quayPullSecret
	t.Run("no pull secret anywhere", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t)).withChart(c).run(ImagePullSecrets())
		outcome{StatusPass, []string{"pull anonymously or with the nodes' credentials"}}.expect(t, r)
	})
	t.Run("one component's secret marks quay.io: the others and the hook have none", func(t *testing.T) {
		r := newKit(t, secret).with(imageInputs(t, "app.imagePullSecrets[0].name=quay-pull")).withChart(c).run(ImagePullSecrets())
		outcome{StatusFail, []string{"quay.io (pull secret quay-pull names it)", "Deployment/op pulls from quay.io with no pull secret",
			"Job/validate-values (hook) pulls from quay.io with no pull secret for it (a hook: only the nodes' credentials serve it)", "give the nodes credentials for the registry"}}.expect(t, r)
	})
	t.Run("a pull secret that does not exist", func(t *testing.T) {
		r := newKit(t).with(imageInputs(t, "app.imagePullSecrets[0].name=gone")).withChart(c).run(ImagePullSecrets())
		outcome{StatusFail, []string{"Deployment/app refers to pull secret gone, which does not exist in namespace codefresh"}}.expect(t, r)
	})
	t.Run("a live ServiceAccount's pull secret serves its pods", func(t *testing.T) {
		sa := `apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: codefresh}
imagePullSecrets: [{name: quay-pull}]`
		r := newKit(t, secret, sa).with(imageInputs(t, "app.imagePullSecrets[0].name=quay-pull")).withChart(c).run(ImagePullSecrets())
		// op and repo run as default; ctrl as app's ServiceAccount, which the
		// chart renders without one; the hook as validate-values-sa (set by
		// the deprecated serviceAccount field).
		outcome{StatusFail, []string{"2 of 5 pods cannot authenticate their pulls", "Deployment/ctrl pulls from quay.io with no pull secret", "Job/validate-values (hook) pulls from quay.io"}}.expect(t, r)
		if strings.Contains(r.Message, "Deployment/op") || strings.Contains(r.Message, "Deployment/repo") {
			t.Errorf("the default ServiceAccount's pull secret serves op and repo: %s", r.Message)
		}
	})
}

// TestImagePullSecretsOnEveryChartLine: on each real chart line of the
// fixtures, a pull secret for quay.io given to app-proxy alone (its
// imagePullSecrets value) serves app-proxy's pods; the gitops-operator's
// and the validate-values hook's pods, which pull from quay.io too, are
// named without one.
func TestImagePullSecretsOnEveryChartLine(t *testing.T) {
	onEveryChartLine(t, func(t *testing.T, dir string) {
		in := imageInputs(t, "app-proxy.imagePullSecrets[0].name=quay-pull", "global.runtime.name=rt1",
			"global.codefresh.accountId=acc", "global.codefresh.userToken.token=x")
		r := newKit(t, quayPullSecret).with(in).withChart(dir).run(ImagePullSecrets())
		outcome{StatusFail, []string{"quay.io (pull secret quay-pull names it)",
			"Deployment/gitops-operator pulls from quay.io with no pull secret for it",
			"Job/validate-values (hook) pulls from quay.io with no pull secret for it (a hook: only the nodes' credentials serve it)"}}.expect(t, r)
		if strings.Contains(r.Message, "Deployment/cap-app-proxy pulls") {
			t.Errorf("app-proxy has the pull secret: %s", r.Message)
		}
	})
}
