module github.com/gitops-preflight/kubectl-gitops-preflight/hack/sign

go 1.26.0

require (
	github.com/ProtonMail/go-crypto v1.5.2
	helm.sh/helm/v4 v4.3.1
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/cloudflare/circl v1.6.3 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
