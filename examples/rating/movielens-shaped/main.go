// Command movielens-shaped writes the seeded rating matrix of
// anonymize/rating's Generate as a long table (user,item,rating; items
// m1…mN and the sensitive issue "age", rated 1..5 by every user), the
// stand-in for MovieLens 100K in docs/anonymize.md:
//
//	go run ./examples/rating/movielens-shaped -out /tmp/ml.csv
//	cohort data rating /tmp/ml.csv --layout long --sensitive age --k 10 --epsilon 2
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/cohortdm/cohort/anonymize/rating"
)

func main() {
	out := flag.String("out", "", "the CSV to write (never replaced)")
	users := flag.Int("users", 943, "users")
	items := flag.Int("items", 1682, "items")
	ratings := flag.Int("ratings", 100000, "ratings to aim at")
	least := flag.Int("min", 20, "the least ratings a user gives")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if err := write(*out, rating.Generate(*users, *items, *ratings, *least, *seed)); err != nil {
		fmt.Fprintln(os.Stderr, "movielens-shaped:", err)
		os.Exit(1)
	}
}

func write(path string, m *rating.Matrix) error {
	if path == "" {
		return fmt.Errorf("-out is required")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "user,item,rating")
	for u, row := range m.R {
		for i, x := range row {
			if x == 0 {
				continue
			}
			item := fmt.Sprintf("m%d", i+1)
			if m.Sensitive[i] {
				item = "age"
			}
			fmt.Fprintf(w, "u%d,%s,%d\n", u+1, item, x)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
