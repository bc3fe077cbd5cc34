// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command release assembles the files of a release, which make release (in
// hack/make/release.mk) builds into bin/release/<VERSION>/: the kubectl plugin's
// archives, the plain manifests in one file with the image pinned, the krew plugin
// manifest and the checksums. The binaries, the image and the chart are built by make
// with go, hack/image.sh and helm; this program writes what is left, the same way on
// every machine.
//
//	go run ./hack/release check-version VERSION
//	go run ./hack/release bump -version VERSION -chart FILE -image REPOSITORY MANIFEST...
//	go run ./hack/release archive -o FILE [-mtime SECONDS] NAME=PATH...
//	go run ./hack/release manifests -kustomization FILE -image REPOSITORY -version VERSION -o FILE
//	go run ./hack/release check-pinned -image REPOSITORY -version VERSION [FILE...]
//	go run ./hack/release krew -version VERSION -url-base URL -o FILE ARCHIVE...
//	go run ./hack/release checksums DIR
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

const usage = `usage: release <command> [flags] [arguments]

commands:
  check-version VERSION       fail unless VERSION is a release version (x.y.z[-pre], no v)
  bump                        set the chart's version and appVersion, and the image's tag in
                              MANIFEST..., to the release, in place
  archive                     write a reproducible .tar.gz of files: NAME=PATH...
  manifests                   write a kustomization's resources as one YAML, the image pinned
  check-pinned                fail unless every reference to the image has the release's tag
  krew                        write the krew plugin manifest of the plugin's archives
  checksums DIR               write DIR/SHA256SUMS of every other file in DIR
`

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a command line that cannot run.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run runs the command of args.
func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command\n" + usage}
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	parse := func() error {
		if err := fs.Parse(args); err != nil {
			return usageError{fmt.Sprintf("%s: %v", cmd, err)}
		}
		return nil
	}
	switch cmd {
	case "check-version":
		if len(args) != 1 {
			return usageError{"usage: release check-version VERSION"}
		}
		return checkVersion(args[0])

	case "bump":
		version := fs.String("version", "", "the release")
		chart := fs.String("chart", "", "the chart's Chart.yaml")
		image := fs.String("image", "", "the image repository whose tag the manifests pin")
		if err := parse(); err != nil {
			return err
		}
		if *version == "" || *chart == "" || *image == "" || fs.NArg() == 0 {
			return usageError{"usage: release bump -version VERSION -chart FILE -image REPOSITORY MANIFEST..."}
		}
		if err := checkVersion(*version); err != nil {
			return err
		}
		changed, err := bump(*version, *chart, *image, fs.Args())
		if err != nil {
			return err
		}
		for _, f := range changed {
			fmt.Fprintf(stdout, "%s: set to %s\n", f, *version)
		}
		return nil

	case "archive":
		out := fs.String("o", "", "the archive to write (.tar.gz)")
		mtime := fs.Int64("mtime", 0, "the modification time of every entry, in seconds since 1970")
		if err := parse(); err != nil {
			return err
		}
		if *out == "" || fs.NArg() == 0 {
			return usageError{"usage: release archive -o FILE [-mtime SECONDS] NAME=PATH..."}
		}
		var entries []archiveEntry
		for _, arg := range fs.Args() {
			name, path, ok := strings.Cut(arg, "=")
			if !ok || name == "" || path == "" {
				return usageError{fmt.Sprintf("archive: %q is not NAME=PATH", arg)}
			}
			entries = append(entries, archiveEntry{Name: name, Path: path})
		}
		return writeArchive(*out, entries, *mtime)

	case "manifests":
		kustomization := fs.String("kustomization", "manifests/kustomization.yaml", "the kustomization whose resources to join")
		image := fs.String("image", "", "the image repository to pin")
		version := fs.String("version", "", "the release, the image's tag")
		out := fs.String("o", "", "the YAML file to write")
		if err := parse(); err != nil {
			return err
		}
		if *image == "" || *version == "" || *out == "" || fs.NArg() != 0 {
			return usageError{"usage: release manifests -kustomization FILE -image REPOSITORY -version VERSION -o FILE"}
		}
		if err := checkVersion(*version); err != nil {
			return err
		}
		b, err := pinnedManifests(*kustomization, *image, *version)
		if err != nil {
			return err
		}
		return writeFile(*out, b, 0o644)

	case "check-pinned":
		image := fs.String("image", "", "the image repository")
		version := fs.String("version", "", "the tag every reference must have")
		if err := parse(); err != nil {
			return err
		}
		if *image == "" || *version == "" {
			return usageError{"usage: release check-pinned -image REPOSITORY -version VERSION [FILE...] (standard input without FILE)"}
		}
		inputs := map[string][]byte{}
		if fs.NArg() == 0 {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return err
			}
			inputs["standard input"] = b
		}
		for _, f := range fs.Args() {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			inputs[f] = b
		}
		for name, b := range inputs {
			n, err := checkPinned(b, *image, *version)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(stdout, "%s: %d references to %s, all %s\n", name, n, *image, *version)
		}
		return nil

	case "krew":
		version := fs.String("version", "", "the release (x.y.z); the plugin's version is vx.y.z")
		urlBase := fs.String("url-base", "", "the URL the archives are downloaded from, without the archive's name")
		homepage := fs.String("homepage", defaultHomepage, "the plugin's homepage")
		out := fs.String("o", "", "the manifest to write; krew wants it named "+pluginName+".yaml")
		if err := parse(); err != nil {
			return err
		}
		if *version == "" || *urlBase == "" || *out == "" || fs.NArg() == 0 {
			return usageError{"usage: release krew -version VERSION -url-base URL -o FILE ARCHIVE..."}
		}
		b, err := krewManifest(*version, *urlBase, *homepage, fs.Args())
		if err != nil {
			return err
		}
		return writeFile(*out, b, 0o644)

	case "checksums":
		if len(args) != 1 {
			return usageError{"usage: release checksums DIR"}
		}
		return writeChecksums(args[0])
	}
	return usageError{fmt.Sprintf("unknown command %q\n%s", cmd, usage)}
}

// versionRE is a version of Semantic Versioning 2.0 without build metadata (an image
// tag cannot hold a +), and without the leading v, which only the git tag and the
// krew manifest add.
var versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// checkVersion says why version cannot name a release, or nil when it can.
func checkVersion(version string) error {
	bad := fmt.Errorf("VERSION %q is not a release version: x.y.z or x.y.z-pre (Semantic Versioning, without the leading v)", version)
	if !versionRE.MatchString(version) {
		return bad
	}
	if _, pre, ok := strings.Cut(version, "-"); ok {
		for _, id := range strings.Split(pre, ".") {
			// A numeric identifier of a pre-release has no leading zero.
			if len(id) > 1 && id[0] == '0' && strings.Trim(id, "0123456789") == "" {
				return bad
			}
		}
	}
	return nil
}

// writeFile writes b to path under a temporary name first, so that an interrupted
// run never leaves half a file behind.
func writeFile(path string, b []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
