// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// linkRE matches the target of a Markdown link or image: ](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks checks every relative link of README.md and docs/*.md: the file it names
// must exist, relative to the Markdown file; an anchor (file.md#anchor, or #anchor for
// the same file) must be the GitHub anchor of one of that file's headings; and no link
// may point outside the repository. Links starting with http://,
// https:// or mailto: are not checked.
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	for _, file := range files {
		name, _ := filepath.Rel(root, file)
		lines, _, err := readMarkdown(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range lines {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if err := checkLink(root, file, target); err != "" {
					t.Errorf("%s:%d: link %q: %s", name, i+1, target, err)
				}
			}
		}
	}
}

// checkLink says what is wrong with a relative link of file, or "" if nothing is.
func checkLink(root, file, target string) string {
	path, anchor, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "points outside the repository"
		}
		if _, err := os.Stat(dest); err != nil {
			return "no such file"
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	_, anchors, err := readMarkdown(dest)
	if err != nil || !anchors[anchor] {
		return "no heading with anchor #" + anchor + " in " + filepath.Base(dest)
	}
	return ""
}

// readMarkdown returns a Markdown file's lines, those of fenced code blocks blanked,
// and the anchors of its headings.
func readMarkdown(file string) ([]string, map[string]bool, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(string(raw), "\n")
	anchors, seen := map[string]bool{}, map[string]int{}
	inFence := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			lines[i] = ""
			continue
		}
		if inFence {
			lines[i] = ""
			continue
		}
		if text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			a := anchorOf(text)
			if n := seen[a]; n > 0 {
				anchors[a+"-"+strconv.Itoa(n)] = true // GitHub numbers repeated headings
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
	}
	return lines, anchors, nil
}

// anchorOf is GitHub's anchor of a heading: lower case, without characters other than
// letters, digits, spaces, hyphens and underscores, spaces made hyphens.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
