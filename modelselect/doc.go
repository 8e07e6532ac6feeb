// Package modelselect is `kind: model-select`: Zhiqiang Yang, Sheng Zhong
// and Rebecca N. Wright's private model selection by cross-validation
// ("Towards Privacy-Preserving Model Selection", PinKDD 2007, §5, Fig. 5).
// One party (the paper's Alice) holds the records' features and, for each
// candidate model, its predicted labels; the other (Bob) holds the true
// labels. For each candidate they run the generalised Hamming distance
// protocol (§4.2 Fig. 2, package hamdist) between the predictions and the
// labels; the distance is the candidate's error count. Everyone learns each
// candidate's error count and the winner (the fewest errors, ties to the
// smallest name); Alice never sees a label, Bob never sees a prediction.
//
// # Spec
//
//	kind: model-select
//	parties: [{name: north, tables: [{name: predictions, path: p.csv}]},
//	          {name: south, tables: [{name: labels, path: l.csv}]}]
//	schema:
//	  predictions: {patient: id, stump: categorical, centroid: categorical}
//	  labels: {patient: id, risk: class}
//	params: {align: psi, min_ids: 10}
//
// The labels table has its id and one class column; the predictions table
// its id and one categorical column per candidate (at most MaxCandidates).
// result.json holds compared, errors and error_rate (per candidate),
// winner, and which party held predictions and labels.
//
// # Why a kind of its own, with out-of-fold predictions
//
// The paper learns each candidate on k−1 folds with privacy-preserving
// learners it uses as black boxes (Vaidya and Clifton's), lets Alice
// classify the held-out records herself (she holds every feature), and
// scores each model on them. Here the predictions column of a candidate
// holds, for every record, the prediction of the model trained without the
// record's fold (k-fold cross-validation's out-of-fold predictions), from
// whatever learner the parties used. One exchange per candidate then gives
// the candidate's k-fold error count; the paper's per-fold counts (its
// step 3b leak) are never formed. The candidates' predictions are the
// prediction holder's, so scoring them is a job of their own rather than a
// mode of sjc-predict, whose predictions are split between parties.
//
// # Leakage profile
//
// Semi-honest parties, DDH in ristretto255 (hamdist's profile).
//
//   - Both parties (align psi) learn which of their ids the other holds,
//     and how many are scored.
//   - The predictions holder holds each run's key and learns each
//     candidate's error count first; nothing else from the exchanges: not
//     which records a candidate got wrong.
//   - The label holder learns nothing from the exchanges.
//   - The coordinator receives the outputs (the counts), and the log, so
//     every member, holds {compared, errors}; the result adds the winner.
//   - Messages: psi-blinded ids and distance ciphertexts to the peer only,
//     control (each run's key, the go-ahead, the receipt), public-result (the outputs).
//     TestLeakage checks every message, output, decision, failure text and
//     node log line over real nodes.
//
// Each error count is a count of the labels: with many candidates whose
// predictions differ at chosen records, the prediction holder could learn
// those records' labels (group testing). MaxCandidates bounds one job;
// nothing yet bounds the counts over many jobs (no node policy counts
// distances per dataset), which is the label holder's to watch in its
// audit ledger. The paper's remedy, a garbled circuit releasing only the
// mean error, is not built.
package modelselect
