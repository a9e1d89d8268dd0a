from debrief_calc.cli import main_state

main_state()
