"""Judging: the policy loader and engine, conditions, subjects, waivers, baseline, impact and the self-check."""
