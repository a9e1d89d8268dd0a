from debrief_calc.cli import main_calc

main_calc()
