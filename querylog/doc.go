// Package querylog sanitises a search engine's query log so that it can be
// published without disclosing the websites its users clicked: B. Poblete,
// M. Spiliopoulou and R. Baeza-Yates, "Website Privacy Preservation for
// Query Log Publishing", PinKDD 2007.
//
// The package is pure: it reads records and returns a publication and its
// figures; the job (package querylog/job) loads the log and sends the
// publication. Sanitise applies the paper's measures in its order:
//
//   - clicked URLs are replaced by a unique id per URL that carries a
//     shared suffix per site, and ranks are hidden (§4.1, option 2), so
//     that re-issuing (query, rank) to the engine cannot undo the ids;
//   - navigational queries, whose terms name the clicked site's root, and
//     queries with fewer than k results are removed (§4.2);
//   - the query graph (queries joined when they share a clicked site) is
//     disconnected by the greedy heuristic of §5 with one of the three
//     scores of §6.2 (degree, degree/queryFrequency, degree/clickedDocs),
//     density reported after every removal, so that the intersection
//     attack of §4.2 (Attack) finds no pair of queries to issue live.
//
// The graph joins queries that share a site, not only a URL as in the
// paper: the per-site suffix publishes which URLs belong to one site, so
// two queries reaching one site already narrow its identity down.
//
// User ids are replaced by pseudonyms and the rows are sorted by value:
// identifying users is a separate problem (§4.4) and the pseudonyms only
// keep the raw ids home. Generate builds a log of the shape of the paper's
// Yahoo! sample (§6.1) for tests and figures.
package querylog
