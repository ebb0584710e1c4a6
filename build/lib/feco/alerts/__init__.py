"""Coverage alerts: rules over the warehouse, roll-up, severity and delivery."""

from feco.alerts.detect import detect_alerts

__all__ = ["detect_alerts"]
