from debrief_calc.cli import main_calc

if __name__ == "__main__":
    main_calc()
