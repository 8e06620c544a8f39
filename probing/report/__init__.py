"""``python -m probing report``: one command that plans, runs and writes a layer report of a
model within a time budget.

- :mod:`probing.report.plan`: which parts the model can do and at what size, from a
  calibration on the model and the budget;
- :mod:`probing.report.parts`: each part's run, its stored form, figure, claims and method;
- :mod:`probing.report.run`: the parts in order, each written as it ends (a killed report
  resumes from its finished parts);
- :mod:`probing.report.identity`: what the model, data and software were;
- :mod:`probing.report.html`: the one self-contained HTML page.
"""
