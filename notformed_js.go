package meshmpi

// retryNotFormed: in a browser tab, a late rank that comes before its job
// formed does not wait inside Join: the run page (web/run.js) shows the
// refusal and loads itself again, so the tab says what it waits for.
const retryNotFormed = false
