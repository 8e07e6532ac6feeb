package console

import (
	"net/url"
	"strconv"
)

// pageSize is how many rows a paged list shows.
const pageSize = 50

// pager is the position in a paged list and the links to its neighbours.
type pager struct {
	Page, Pages int
	Prev, Next  string // "" at either end
}

// pageOf reads ?page= (1 when absent or bad).
func pageOf(q url.Values) int {
	p, err := strconv.Atoi(q.Get("page"))
	if err != nil || p < 1 {
		return 1
	}
	return p
}

// newPager clamps page to the rows there are and links to the pages
// around it, keeping the other query parameters.
func newPager(path string, q url.Values, page, rows int) pager {
	p := pager{Pages: max(1, (rows+pageSize-1)/pageSize)}
	p.Page = min(page, p.Pages)
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			if k != "page" && len(vs) > 0 && vs[0] != "" {
				v.Set(k, vs[0])
			}
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	return p
}

// bounds are the first and end index of the page's rows.
func (p pager) bounds(rows int) (int, int) {
	lo := (p.Page - 1) * pageSize
	return min(lo, rows), min(lo+pageSize, rows)
}
