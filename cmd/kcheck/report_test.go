package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// issueLink is a link of traces/scenarios/README.md's table to a trace's
// issue body: the Makefile's issues target reads the same links.
var issueLink = regexp.MustCompile(`\(issues/([^)]+)\.md\)`)

// TestIssuesCurrent holds traces/scenarios/issues to what kcheck report
// writes now, as make issues-check does: one body for each trace the
// README's table links, none other, each as the command writes it.
func TestIssuesCurrent(t *testing.T) {
	t.Chdir(filepath.Join("..", "..")) // the bodies name the traces from the repository's root
	readme, err := os.ReadFile("traces/scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range issueLink.FindAllStringSubmatch(string(readme), -1) {
		linked = append(linked, m[1])
	}
	if len(linked) == 0 {
		t.Fatal("traces/scenarios/README.md links no issue body")
	}
	files, err := filepath.Glob("traces/scenarios/issues/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, f := range files {
		have = append(have, strings.TrimSuffix(filepath.Base(f), ".md"))
	}
	slices.Sort(linked)
	slices.Sort(have)
	if !slices.Equal(linked, have) {
		t.Fatalf("traces/scenarios/issues holds %v, the README links %v: make issues", have, linked)
	}
	for _, name := range linked {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"kcheck", "report", "traces/scenarios/" + name + ".jsonl"}, &stdout, &stderr); code != 0 {
			t.Fatalf("kcheck report %s: exit %d: %s", name, code, stderr.String())
		}
		want, err := os.ReadFile("traces/scenarios/issues/" + name + ".md")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stdout.Bytes(), want) {
			t.Errorf("traces/scenarios/issues/%s.md is not what kcheck report writes now: make issues", name)
		}
	}
}
