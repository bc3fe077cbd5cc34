// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"
)

// archiveEntry is a file of an archive: Name in the archive, Path on disk.
type archiveEntry struct {
	Name string
	Path string
}

// writeArchive writes a .tar.gz of entries, in their order, that depends on nothing
// but their contents, names and executable bits: every entry is owned by 0:0, has
// mtime, and mode 0755 when the file on disk is executable by anyone, else 0644; the
// gzip header has no name and no time. The same inputs give the same bytes, and so the
// same checksum, on any machine.
func writeArchive(out string, entries []archiveEntry, mtime int64) error {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	seen := map[string]bool{}
	for _, e := range entries {
		if !fs.ValidPath(e.Name) || e.Name == "." {
			return fmt.Errorf("archive: %q is not a plain relative name", e.Name)
		}
		if seen[e.Name] {
			return fmt.Errorf("archive: %q twice", e.Name)
		}
		seen[e.Name] = true
		b, err := os.ReadFile(e.Path)
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		fi, err := os.Stat(e.Path)
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		mode := int64(0o644)
		if fi.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.Name,
			Mode:     mode,
			Size:     int64(len(b)),
			ModTime:  time.Unix(mtime, 0),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("archive: %s: %w", e.Name, err)
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return writeFile(out, buf.Bytes(), 0o644)
}

// archiveFile is a file read from an archive.
type archiveFile struct {
	Mode    int64
	Content []byte
}

// readArchive returns the regular files of a .tar.gz by name.
func readArchive(file string) (map[string]archiveFile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tr := tar.NewReader(gz)
	files := map[string]archiveFile{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, hdr.Name, err)
		}
		files[path.Clean(hdr.Name)] = archiveFile{Mode: hdr.Mode, Content: b}
	}
}

// sha256File is the hex SHA-256 of a file's contents.
func sha256File(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
