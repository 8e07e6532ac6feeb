//go:build ignore

// sizes lists the non-test Go files over 600 lines and the functions over
// 100 lines in the repository, the limits the project keeps; with -all it
// prints the largest file and longest function and the non-test lines of
// code per top-level package directory.
//
//	go run scripts/sizes.go [-all]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	all := flag.Bool("all", false, "also print the largest file, the longest function and lines per package")
	flag.Parse()
	type item struct {
		name  string
		lines int
	}
	var files, funcs []item
	perPkg := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "bench" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "scripts/") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := strings.Count(string(src), "\n")
		files = append(files, item{path, n})
		perPkg[filepath.Dir(path)] += n
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			l := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				name = fmt.Sprintf("(%s).%s", types(fd.Recv.List[0].Type), name)
			}
			funcs = append(funcs, item{path + ":" + name, l})
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].lines > files[j].lines })
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].lines > funcs[j].lines })
	bad := 0
	for _, f := range files {
		if f.lines > 600 {
			fmt.Printf("file %s: %d lines\n", f.name, f.lines)
			bad++
		}
	}
	for _, f := range funcs {
		if f.lines > 100 {
			fmt.Printf("func %s: %d lines\n", f.name, f.lines)
			bad++
		}
	}
	if *all {
		fmt.Printf("largest file: %s (%d lines); longest function: %s (%d lines)\n", files[0].name, files[0].lines, funcs[0].name, funcs[0].lines)
		var pkgs []string
		for p := range perPkg {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			fmt.Printf("%-28s %6d\n", p, perPkg[p])
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}

func types(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + types(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return types(t.X)
	}
	return "?"
}
