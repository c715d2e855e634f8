package cli

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// imagesFlags are the flags of the image checks: the mirror the images
// should come from and whether to ask the registries.
type imagesFlags struct {
	Mirror        string
	RegistryCheck bool
}

// AddFlags declares --registry-mirror and --registry-check.
func (f *imagesFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Mirror, "registry-mirror", "", "the private registry every image should be pulled from, HOST[/PREFIX]: image-plan names each image elsewhere and the value that moves it (default: global.imageRegistry when set)")
	fs.BoolVar(&f.RegistryCheck, "registry-check", false, "image-registry: resolve each image's manifest at its registry (dials the registries, through --connect-to) with the pods' pull secrets or the local Docker config")
}

// complete validates the flags and fills the run's image options; the
// error is a usage error.
func (f *imagesFlags) complete(c *run.Config) error {
	m := strings.TrimSuffix(strings.TrimSpace(f.Mirror), "/")
	if m != "" {
		if strings.Contains(m, "://") {
			return usageError("--registry-mirror is HOST[/PREFIX], without a scheme: not %q", f.Mirror)
		}
		// A mirror is a repository prefix: it must parse as one.
		if _, err := name.NewRepository(m+"/x", name.StrictValidation); err != nil {
			return usageError("--registry-mirror %q is not HOST[/PREFIX]: %v", f.Mirror, err)
		}
	}
	c.Images = checks.ImageOptions{Mirror: m, RegistryCheck: f.RegistryCheck}
	return nil
}
