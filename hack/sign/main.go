// Command sign writes Helm 4 provenance files for release archives (make
// dist): for each ARCHIVE it writes ARCHIVE.prov, the clear-signed sha256
// of the archive under its file name, which `helm plugin install` (Helm 4,
// verification on by default) checks against the user's keyring. The
// signing is Helm's own (helm.sh/helm/v4/pkg/provenance), as `helm plugin
// package --sign` does it.
//
//	sign -keyring KEY.asc [-key NAME] [-passphrase-env VAR] ARCHIVE...
//	sign -gen-key DIR [-key NAME]
//	sign -keyring KEY.asc [-key NAME] -export-public FILE
//
// -keyring is an OpenPGP secret keyring (armored or binary) holding the
// project's release key; its passphrase, if any, is read from the
// environment variable -passphrase-env names. -gen-key writes a throwaway
// key pair to DIR/secring.asc and DIR/pubring.asc: for tests only, never for
// a release. -export-public writes the armored public key of -key, the file
// users give Helm 4 as --keyring.
//
// This is its own Go module so that the plugin's module does not depend on
// Helm 4.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"helm.sh/helm/v4/pkg/provenance"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sign:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		keyring  = flag.String("keyring", "", "secret keyring file with the signing key")
		key      = flag.String("key", "gitops-preflight", "name (or part of it) of the key in the keyring")
		passEnv  = flag.String("passphrase-env", "", "environment variable holding the key's passphrase")
		genKey   = flag.String("gen-key", "", "write a throwaway key pair to this directory and exit (tests)")
		metadata = flag.String("plugin-yaml", "plugin.yaml", "the plugin.yaml recorded in each .prov")
		export   = flag.String("export-public", "", "write the armored public key of -key to this file and exit")
	)
	flag.Parse()
	if *genKey != "" {
		return generate(*genKey, *key)
	}
	if *keyring == "" || (flag.NArg() == 0 && *export == "") {
		return errors.New("usage: sign -keyring KEY.asc [-key NAME] [-passphrase-env VAR] ARCHIVE...")
	}
	signer, err := provenance.NewFromKeyring(*keyring, *key)
	if err != nil {
		return fmt.Errorf("reading %s: %w", *keyring, err)
	}
	if signer.Entity == nil {
		return fmt.Errorf("no key named %q in %s", *key, *keyring)
	}
	if *export != "" {
		var pub bytes.Buffer
		w, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
		if err != nil {
			return err
		}
		if err := signer.Entity.Serialize(w); err != nil {
			return err
		}
		w.Close()
		return os.WriteFile(*export, pub.Bytes(), 0o644)
	}
	if err := signer.DecryptKey(func(string) ([]byte, error) {
		if *passEnv == "" {
			return nil, errors.New("the key is encrypted: name the passphrase's variable with -passphrase-env")
		}
		return []byte(os.Getenv(*passEnv)), nil
	}); err != nil {
		return err
	}
	meta, err := os.ReadFile(*metadata)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := yaml.Unmarshal(meta, &m); err != nil {
		return fmt.Errorf("%s: %w", *metadata, err)
	}
	metaBytes, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	for _, archive := range flag.Args() {
		data, err := os.ReadFile(archive)
		if err != nil {
			return err
		}
		prov, err := signer.ClearSign(data, filepath.Base(archive), metaBytes)
		if err != nil {
			return fmt.Errorf("signing %s: %w", archive, err)
		}
		if err := os.WriteFile(archive+".prov", []byte(prov), 0o644); err != nil {
			return err
		}
		// Check the result as Helm 4 will.
		if _, err := signer.Verify(data, []byte(prov), filepath.Base(archive)); err != nil {
			return fmt.Errorf("verifying %s.prov: %w", archive, err)
		}
	}
	return nil
}

// generate writes an unencrypted throwaway key pair, armored.
func generate(dir, name string) error {
	e, err := openpgp.NewEntity(name, "test key", name+"@example.invalid", &packet.Config{RSABits: 2048})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var sec, pub bytes.Buffer
	w, err := armor.Encode(&sec, openpgp.PrivateKeyType, nil)
	if err != nil {
		return err
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		return err
	}
	w.Close()
	w, err = armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err != nil {
		return err
	}
	if err := e.Serialize(w); err != nil {
		return err
	}
	w.Close()
	if err := os.WriteFile(filepath.Join(dir, "secring.asc"), sec.Bytes(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "pubring.asc"), pub.Bytes(), 0o644)
}
