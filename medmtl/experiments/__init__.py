"""Reproductions of the papers' figures and tables, and the ``medmtl`` command line.

How to run::

    runner         RunOptions (quick or full, seed, workers, cache), run_grid over
                   cells, CellCall (a function of keyword settings as a cell function)
    cache          finished cells as JSON and .npz files, keyed on the settings and on
                   fingerprints of the code and the data; damaged entries recomputed
    registry       register an experiment; run("dermatology", quick=True)
    result         ExperimentResult: the NAME.json / NAME.png output contract
    leakage        the test-label guard every experiment scores through, and the check that
                   no choice changes when the test labels are permuted
    report         the docs' results page (docs/results.md), from committed full-run results
    cli, demo      medmtl reproduce NAME; make demo

One module per paper::

    med_figures    JMLR Fig. 1-3: Dermatology, Landmine, Heart
    med_lecture    the lecture notes: splice, housing, NCI60, Dermatology surfaces
    shampo, amlc, mts3flc

The MED figures' protocol, one concern per module::

    preprocessing  scaling on the training inputs; the quadratic expansion
    splits         per-task splits for rare classes
    selection      warm-started regularisation paths; choice on validation
    (the baselines themselves live in medmtl.baselines)
    kernel_banks   the Landmine bank of per-feature, RBF and polynomial kernels
    med_method     the MED solution method and tolerance the experiments use
    threads        one BLAS thread per cell

``docs/extending/add_an_experiment.md`` shows how to add one.
"""
