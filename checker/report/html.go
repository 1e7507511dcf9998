package report

import (
	"bufio"
	"embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"

	"github.com/kcheck/kcheck/checker/linz"
	"github.com/kcheck/kcheck/checker/verify"
)

// HTML writes dir/index.html, a self-contained page with r's verdict and
// violations and per-partition timelines drawn from what c gathered in
// verify's pass, and Porcupine's view of each illegal partition; each file
// whole or not at all.
func HTML(dir string, r *verify.Report, c *Collector) error {
	if c == nil {
		return fmt.Errorf("HTML report in %s: no Collector: give one to verify (Options.Observers) to gather what the page draws", dir)
	}
	if err := writeHTML(dir, r, c); err != nil {
		return fmt.Errorf("HTML report in %s: %w", dir, err)
	}
	return nil
}

func writeHTML(dir string, r *verify.Report, c *Collector) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Porcupine's views go to a temporary directory first, so that a failure
	// leaves none half-written.
	var views map[int32]string
	var moves [][2]string
	if lr := r.LinzResult(); lr != nil && lr.Verdict == linz.Illegal {
		tmp, err := os.MkdirTemp(dir, ".kcheck-porcupine-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		files, err := lr.WriteIllegal(tmp)
		if err != nil {
			return err
		}
		views = map[int32]string{}
		for _, f := range files {
			name := filepath.Base(f)
			var p int32
			if _, err := fmt.Sscanf(name, "partition-%d.html", &p); err == nil {
				views[p] = name
			}
			moves = append(moves, [2]string{f, filepath.Join(dir, name)})
		}
	}
	pg := newPage(r, c, views)
	tmp, err := os.CreateTemp(dir, ".kcheck-index-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := pageHTML.ExecuteTemplate(bw, "page.tmpl", pg); err != nil {
		tmp.Close()
		return fmt.Errorf("rendering: %w", err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	for _, m := range moves {
		if err := os.Rename(m[0], m[1]); err != nil {
			return err
		}
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, "index.html"))
}

// assets are the page's template, CSS and script.
//
//go:embed html/page.tmpl html/timeline.tmpl html/base.css html/page.css html/page.js
var assets embed.FS

// pageHTML is the page's template: html/page.tmpl, which includes the CSS
// (html/base.css, then the timelines' html/page.css) and the script, and
// html/timeline.tmpl, a partition's SVG timeline.
var pageHTML = template.Must(template.ParseFS(assets, "html/page.tmpl", "html/timeline.tmpl", "html/base.css", "html/page.css", "html/page.js"))

// BaseCSS is the style sheet kcheck's HTML pages share: the page and its
// headings, the verdict banner (.verdict with valid, violations or
// inconclusive; .vword, .vnote, .file), the table of checks (table.checks,
// rows good, bad or meh) and notes (.note). A page of another report puts
// it in its own <style>, so that it stays one self-contained file.
func BaseCSS() template.CSS { return template.CSS(baseCSS) }

//go:embed html/base.css
var baseCSS string
