package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		// Values.
		`userToken: {token: abc123}`:                                             `userToken: {token: ***}`,
		`  token: "s3cr3t"`:                                                      `  token: "***"`,
		`PASSWORD=hunter2 next`:                                                  `PASSWORD=*** next`,
		`Authorization: Bearer eyJhbGciOi.x.y`:                                   `Authorization: Bearer ***`,
		`Authorization: Basic dXNlcjpwYXNzd29yZA==`:                              `Authorization: Basic ***`,
		`header "Authorization: Basic dXNlcjpw"`:                                 `header "Authorization: Basic ***"`,
		`clone https://user:PASS1234@github.com/x.git`:                           `clone https://user:***@github.com/x.git`,
		`x-api-key VALUE123 rejected`:                                            `x-api-key *** rejected`,
		`token => VALUE123`:                                                      `token => ***`,
		`token=[VALUE123]`:                                                       `token=[***]`,
		`PAT: VALUE123`:                                                          `PAT: ***`,
		`Bearer client_secret: VALUE123`:                                         `Bearer *** ***`,
		`admission webhook denied: spec.password=hunt3r`:                         `admission webhook denied: spec.password=***`,
		`{"password":"p4ss","user":"me"}`:                                        `{"password":"***","user":"me"}`,
		`apiKey: abcd1234`:                                                       `apiKey: ***`,
		`aws_secret_access_key=AKIAxyz`:                                          `aws_secret_access_key=***`,
		`jwt eyJhbGciOiJSUzI1NiIs.eyJzdWIiOiJhZG1pbiJ9.sig-nature ok`:            `jwt *** ok`,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----": "-----BEGIN PRIVATE KEY----- *** -----END PRIVATE KEY-----",
		// References stay readable.
		`secretKeyRef: {name: runtime-token, key: token}`:                            `secretKeyRef: {name: runtime-token, key: token}`,
		`secretName: runtime-tls`:                                                    `secretName: runtime-tls`,
		`existingSecret: codefresh-token`:                                            `existingSecret: codefresh-token`,
		`passwordKey: admin.password`:                                                `passwordKey: admin.password`,
		`tokenSecretRef=my-secret`:                                                   `tokenSecretRef=my-secret`,
		`nginx.ingress.kubernetes.io/proxy-ssl-secret is "osm-system/osm-ca-bundle"`: `nginx.ingress.kubernetes.io/proxy-ssl-secret is "osm-system/osm-ca-bundle"`,
		`nginx.ingress.kubernetes.io/auth-secret: basic-auth`:                        `nginx.ingress.kubernetes.io/auth-secret: basic-auth`,
		// Placeholders and the fields of a reference in hints.
		`--from-literal=token=<your Codefresh API key>, then`:             `--from-literal=token=<your Codefresh API key>, then`,
		`--set global.codefresh.userToken.secretKeyRef.key=token instead`: `--set global.codefresh.userToken.secretKeyRef.key=token instead`,
		`token=<s3cr3tvalue>`:                     `token=<***>`,
		`token=<abc def;rm>`:                      `token=<*** def;rm>`,
		`global.codefresh.userToken.token=abc123`: `global.codefresh.userToken.token=***`,
		// Where an image comes from, under a chart named after secrets.
		`--set sealed-secrets.image.registry=registry.example`:   `--set sealed-secrets.image.registry=registry.example`,
		`set sealed-secrets.image.repository=m.example/sealed`:   `set sealed-secrets.image.repository=m.example/sealed`,
		`--set sealed-secrets.image.tokenRef=x token=abc123`:     `--set sealed-secrets.image.tokenRef=x token=***`,
		`--set external-secrets.webhook.image.tag=v1 secret=abc`: `--set external-secrets.webhook.image.tag=v1 secret=***`,
		// Objects named after their kind.
		`  pod sealed-secrets-controller-5d7f9-x2x: container controller: CrashLoopBackOff`: `  pod sealed-secrets-controller-5d7f9-x2x: container controller: CrashLoopBackOff`,
		`Deployment/sealed-secrets-controller: 0/1 available`:                               `Deployment/sealed-secrets-controller: 0/1 available`,
		`container db-password: hunter2`:                                                    `container db-password: ***`,
		`container password: hunter2`:                                                       `container password: ***`,
		`pod token-refresher-7f: Pending`:                                                   `pod token-refresher-7f: Pending`,
		`podsecret-token: hunter2`:                                                          `podsecret-token: ***`,
		`my pod-token-x: hunter2`:                                                           `my pod-token-x: ***`,
		// Prose.
		`failed validating file "values.yaml"`: `failed validating file "values.yaml"`,
		`missing "global.runtime.name" field`:  `missing "global.runtime.name" field`,
		`the token expired`:                    `the token expired`,
		`password is wrong`:                    `password is wrong`,
		`path: /tmp/x`:                         `path: /tmp/x`,
		`Secret codefresh/runtime-tls is not of type kubernetes.io/tls`: `Secret codefresh/runtime-tls is not of type kubernetes.io/tls`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// Shapes is every way a planted token is written in the tests and the fuzz
// target: %s is the token.
var Shapes = []string{
	"password=%s", "token: %s", `"token": "%s"`, "Authorization: Basic %s", "Authorization: Bearer %s",
	"https://user:%s@example.com/x", "x-api-key %s", "token => %s", "token=[%s]", "PAT: %s",
	"spec.password=%s", "Bearer client_secret: %s", "apiKey: %s", "client_secret=%s", "Bearer %s",
	"passwd:%s", "credentials = %s", "token -> %s", "token=(%s)", "api_key '%s'",
}

func FuzzString(f *testing.F) {
	for i := range Shapes {
		f.Add("webhook denied the request:", "hunter2hunter2", "and more", uint8(i))
	}
	f.Add("", "AKIAIOSFODNN7EXAMPLE", "", uint8(3))
	f.Add("log: {", "s3cr3tT0ken", "}", uint8(1))
	f.Fuzz(func(t *testing.T, prefix, token, suffix string, shape uint8) {
		token = alnum(token)
		if len(token) < 8 || strings.Contains(prefix, token) || strings.Contains(suffix, token) {
			return
		}
		line := prefix + " " + strings.ReplaceAll(Shapes[int(shape)%len(Shapes)], "%s", token) + " " + suffix
		out := String(line)
		if strings.Contains(out, token) {
			t.Fatalf("token survived:\n in %q\nout %q", line, out)
		}
		if String(out) != out {
			t.Fatalf("not idempotent: %q -> %q", out, String(out))
		}
	})
}

func alnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
