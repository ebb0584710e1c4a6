"""Coverage alerts: rules over the warehouse, roll-up, severity and delivery.

Nothing is imported here: ``feco.alerts.detect`` loads SciPy (the false-page budget), which
the commands that only read incidents (`feco alerts`, `feco status`) never need.
"""
