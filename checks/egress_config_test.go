package checks

import "testing"

func TestEgressConfig(t *testing.T) {
	c := imageChart(t)
	api := `apiVersion: v1
kind: Service
metadata: {name: kubernetes, namespace: default}
spec: {clusterIP: 10.96.0.1, clusterIPs: [10.96.0.1], ports: [{port: 443}]}`
	t.Run("no proxy", func(t *testing.T) {
		r := newKit(t, api).with(imageInputs(t)).withChart(c).run(EgressConfig())
		outcome{StatusPass, []string{"no proxy configured"}}.expect(t, r)
	})
	t.Run("a proxy the operator does not get, and NO_PROXY that misses the API server and a Service", func(t *testing.T) {
		r := newKit(t, api).with(imageInputs(t, "global.httpsProxy=http://proxy.corp:3128", "global.httpProxy=http://proxy.corp:3128", "global.noProxy=.svc")).withChart(c).run(EgressConfig())
		outcome{StatusFail, []string{
			"Deployment/op calls the platform (g.codefresh.io) with no proxy",
			"Deployment/app sends Service op (op:8080), the API server (10.96.0.1:443) to the proxy: NO_PROXY \".svc\" does not cover them",
			`--set-string 'global.noProxy=.svc\,10.96.0.1\,op'`,
		}}.expect(t, r)
	})
	t.Run("a platform CA nothing mounts", func(t *testing.T) {
		r := newKit(t, api).with(imageInputs(t, "global.codefresh.tls.caCerts.secret.create=true")).withChart(c).run(EgressConfig())
		outcome{StatusFail, []string{"calls the platform without the platform CA (Secret codefresh-tls-certs) mounted"}}.expect(t, r)
	})
}
